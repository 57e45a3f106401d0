"""``python -m orharbor.build_dataset ...``: same as ``orharbor build-dataset``."""

import sys


def _command():
    from orharbor.cli import build_dataset_cmd, expand_multi_value

    args = expand_multi_value(sys.argv[1:])
    return lambda: build_dataset_cmd.main(args, prog_name="python -m orharbor.build_dataset")


if __name__ == "__main__":
    from orharbor.entry import start

    start(_command)
