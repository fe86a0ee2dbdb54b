"""``python -m frozenmap``: the version, which core is loaded, and why."""

import argparse
import platform
import sys
from typing import Optional, Sequence

import frozenmap


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m frozenmap",
        description="Say which frozenmap this is: its version, the Python running it, "
        "which core is loaded (the C core or the pure-Python one) and why, and where "
        "the package was imported from.  The benchmark is python -m frozenmap.bench.",
    )
    parser.parse_args(argv)
    print(
        "frozenmap %s on %s %s (%s)"
        % (
            frozenmap.__version__,
            platform.python_implementation(),
            platform.python_version(),
            sys.platform,
        )
    )
    if frozenmap.IMPLEMENTATION == "c":
        from frozenmap._ccore import _cfrozenmap

        print("core: c (%s: %s)" % (frozenmap._CORE_REASON, _cfrozenmap.__file__))
    else:
        print("core: python (%s)" % frozenmap._CORE_REASON)
    print("package: %s" % frozenmap.__path__[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
