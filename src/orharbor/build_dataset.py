"""``python -m orharbor.build_dataset ...``: same as ``orharbor build-dataset``."""

from orharbor.cli import main

if __name__ == "__main__":
    main(["build-dataset", *__import__("sys").argv[1:]], prog_name="python -m orharbor.build_dataset")
