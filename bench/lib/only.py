"""--only KEY=VALUE,... as a scenario checks it: bad input is refused
with the scenario's name and what it knows, before anything runs."""


def keys(scenario, only, known):
    """Refuse a key of ONLY ({key: [values]}) that is not in KNOWN."""
    bad = [k for k in only if k not in known]
    if bad:
        raise SystemExit("%s: unknown --only key %s (known: %s)" % (
            scenario, ", ".join(bad), ", ".join(known)))


def values(scenario, what, asked, known):
    """Refuse a name of ASKED that is not in KNOWN (WHAT: the kind of
    name, for the message)."""
    unknown = [n for n in asked if n not in known]
    if unknown:
        raise SystemExit("%s: unknown %s %s (known: %s)" % (
            scenario, what, ", ".join(unknown), " ".join(known)))
