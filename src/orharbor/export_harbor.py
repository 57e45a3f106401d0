"""``python -m orharbor.export_harbor ...``: same as ``orharbor export``."""

from orharbor.cli import main

if __name__ == "__main__":
    main(["export", *__import__("sys").argv[1:]], prog_name="python -m orharbor.export_harbor")
