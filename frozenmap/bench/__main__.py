"""``python -m frozenmap.bench``: see :mod:`frozenmap.bench.cli`."""

import sys

from .cli import main

sys.exit(main())
