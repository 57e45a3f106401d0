"""``python -m orharbor.export_harbor ...``: same as ``orharbor export``."""

import sys

from orharbor.cli import expand_multi_value, export_cmd

if __name__ == "__main__":
    export_cmd.main(expand_multi_value(sys.argv[1:]), prog_name="python -m orharbor.export_harbor")
