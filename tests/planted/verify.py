#!/usr/bin/env python3
"""Check that the planted suites (tests/planted, run in the VM by
`make vmcheck-planted`) failed, each for its planted reason, from the
JUnit XML pytest wrote there:

  python3 tests/planted/verify.py build/vm/planted.xml

Exit 0 when every planted bug was caught, 1 otherwise (saying which)."""
import sys
import xml.etree.ElementTree as ET

# test -> texts its failure (or teardown error) must contain
EXPECT = {
    "test_planted_leak.test_leak": [
        "kernel reported problems during test_planted_leak",
        "cocktail_planted_leak",
        "the kernel became tainted",
    ],
    "test_planted_warn_after_wrap.test_warn_after_wrap": [
        "kernel reported problems during test_planted_warn_after_wrap",
        "cocktail planted warning",
        "overwritten before they were read",
    ],
    "test_planted_skip.test_skip": [
        "unexpected skip",
        "planted skip",
    ],
}


def failures(path):
    """{classname.name: text of every failure/error element}."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = "%s.%s" % (case.get("classname", "").split(".")[-1],
                         case.get("name"))
        for el in list(case.findall("failure")) + list(case.findall("error")):
            out[key] = out.get(key, "") + "\n" + (el.get("message") or "") + \
                "\n" + (el.text or "")
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        got = failures(argv[1])
    except (OSError, ET.ParseError) as e:
        print("verify: no results from the planted run: %s" % e,
              file=sys.stderr)
        return 1
    bad = []
    for test, texts in EXPECT.items():
        text = got.get(test)
        if text is None:
            bad.append("%s did not fail: the planted bug went unnoticed" %
                       test)
            continue
        missing = [t for t in texts if t not in text]
        if missing:
            bad.append("%s failed, but its report lacks %s" % (test, missing))
    for b in bad:
        print("verify: " + b, file=sys.stderr)
    if not bad:
        print("verify: every planted bug was caught (%s)" %
              ", ".join(sorted(EXPECT)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
