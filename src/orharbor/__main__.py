"""``python -m orharbor``: the orharbor command line."""

from orharbor.entry import main

main()
