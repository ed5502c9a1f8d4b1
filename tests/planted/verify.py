#!/usr/bin/env python3
"""Check that the planted suites (tests/planted, run in the VM by
`make vmcheck-planted`, and on the debug kernel by `make vmcheck-debug`)
failed, each for its planted reason, from the JUnit XML pytest wrote there:

  python3 tests/planted/verify.py [--debug] build/vm/planted.xml

--debug: the run was on the debug kernel, whose KASAN reports the overrun
where it happens and whose kmemleak scan at the end of the run finds the
planted kmalloc leak.

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
    "test_planted_redzone.test_redzone": [
        "kernel reported problems during test_planted_redzone",
        "Right Redzone overwritten",
    ],
    "test_planted_skip.test_skip": [
        "unexpected skip",
        "planted skip",
    ],
}


# On the debug kernel: KASAN sees the overrun itself; kmemleak's report
# comes at the end of the session, on whichever test ran last.
EXPECT_DEBUG = {
    "test_planted_redzone.test_redzone": [
        "kernel reported problems during test_planted_redzone",
        "KASAN: slab-out-of-bounds",
    ],
}
EXPECT_DEBUG_SESSION = ["kmemleak found unreferenced objects"]


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
    debug = "--debug" in argv[1:]
    args = [a for a in argv[1:] if a != "--debug"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    expect = dict(EXPECT, **EXPECT_DEBUG) if debug else EXPECT
    try:
        got = failures(args[0])
    except (OSError, ET.ParseError) as e:
        print("verify: no results from the planted run: %s" % e,
              file=sys.stderr)
        return 1
    bad = []
    if debug:
        every = "\n".join(got.values())
        for t in EXPECT_DEBUG_SESSION:
            if t not in every:
                bad.append("the session did not fail with %r: the planted "
                           "kmalloc leak went unnoticed" % t)
    for test, texts in expect.items():
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
              ", ".join(sorted(expect)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
