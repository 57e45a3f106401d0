"""``python -m orharbor``: the orharbor command line."""

from orharbor.cli import main

main()
