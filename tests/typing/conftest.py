"""tests/typing holds static checks for mypy and pyright, not pytest tests.

``scripts/checks/20-typing.sh`` runs the type checkers on these files (and runs
test_api.py as a plain script); pytest skips them.
"""

collect_ignore = ["test_api.py"]
