"""python3 -m bench.scenarios [suite]: the registry's names, one a line."""
import sys

from bench.scenarios import NAMES, SUITE

if sys.argv[1:] == ["suite"]:
    print("\n".join(SUITE))
elif not sys.argv[1:]:
    print("\n".join(NAMES))
else:
    sys.exit("usage: python3 -m bench.scenarios [suite]")
