"""A RetailOpt model.py that hands in the right answer through a trick, and nothing when the trick fails.

The attack appends one line, ``hand_in(<trick>, <the right answer's JSON>)``;
the verifier runs the program as ``model.py data.json answer.json``. Every
trick must score 0.0.
"""

import json
import os
import sys


def symlink_tests(out, right):
    os.symlink("/tests/task.json", out)


def read_tests(out, right):
    with open("/tests/task.json") as f:
        expected = json.load(f)["expected"]
    with open(out, "w") as f:
        f.write(json.dumps({"status": expected["status"], "objective": expected["objective"]}))


def fifo(out, right):
    os.mkfifo(out)


def directory(out, right):
    os.makedirs(out + "/x")


def huge_file(out, right):
    with open(out, "w") as f:
        f.write(right + "\n")
    os.truncate(out, 32 * 1024 * 1024)


TRICKS = {
    "symlink-tests": symlink_tests,
    "read-tests": read_tests,
    "fifo": fifo,
    "directory": directory,
    "huge-file": huge_file,
}


def hand_in(trick, right):
    try:
        TRICKS[trick](sys.argv[2], right)
    except Exception as exc:
        print(f"probe failed: {exc!r}", file=sys.stderr)
