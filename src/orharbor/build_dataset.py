"""``python -m orharbor.build_dataset ...``: same as ``orharbor build-dataset``."""

import sys

from orharbor.cli import build_dataset_cmd, expand_multi_value

if __name__ == "__main__":
    build_dataset_cmd.main(expand_multi_value(sys.argv[1:]), prog_name="python -m orharbor.build_dataset")
