"""``python -m orharbor.export_harbor ...``: same as ``orharbor export``."""

import sys


def _command():
    from orharbor.cli import expand_multi_value, export_cmd

    args = expand_multi_value(sys.argv[1:])
    return lambda: export_cmd.main(args, prog_name="python -m orharbor.export_harbor")


if __name__ == "__main__":
    from orharbor.entry import start

    start(_command)
