"""``python -m frozenmap``: the version, which core is loaded, and why."""

import platform
import sys

import frozenmap


def main() -> None:
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


if __name__ == "__main__":
    main()
