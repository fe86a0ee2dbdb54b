# Stub for the C extension module.  The C core implements exactly the public
# types declared in frozenmap/__init__.pyi, so this stub re-exports them rather
# than repeating them.  stubtest skips re-exported names, so the C core is held to
# those declarations through the public module instead, with the C core loaded
# (scripts/checks/20-typing.sh):
#
#     python -m mypy.stubtest frozenmap --mypy-config-file tests/typing/stubtest-mypy.ini \
#         --allowlist tests/typing/stubtest-allowlist.txt --ignore-unused-allowlist
from frozenmap import Evolver as Evolver
from frozenmap import frozendict as frozendict

# The tries' layout constants (tests/test_layout_constants.py).
_layout: dict[str, int]
