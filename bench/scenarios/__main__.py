"""python3 -m bench.scenarios [suite|host]: the registry's names, one a
line."""
import sys

from bench.scenarios import HOST, NAMES, SUITE

if sys.argv[1:] == ["suite"]:
    print("\n".join(SUITE))
elif sys.argv[1:] == ["host"]:
    print("\n".join(HOST))
elif not sys.argv[1:]:
    print("\n".join(NAMES))
else:
    sys.exit("usage: python3 -m bench.scenarios [suite|host]")
