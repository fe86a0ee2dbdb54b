# Stub for the C extension module.  The C core implements exactly the public
# types declared in frozenmap/__init__.pyi, so this stub re-exports them rather
# than repeating them; stubtest checks the C module against these declarations:
#
#     python -m mypy.stubtest frozenmap._ccore._cfrozenmap
from frozenmap import Evolver as Evolver, frozendict as frozendict
