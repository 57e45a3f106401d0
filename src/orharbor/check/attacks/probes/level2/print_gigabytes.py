"""Print 2 GB to stdout: the verifier must not keep, or choke on, that much output."""

import sys


def capability():
    chunk = "x" * (1 << 20)
    for _ in range(2048):
        sys.stdout.write(chunk)
    sys.stdout.flush()
    return True
