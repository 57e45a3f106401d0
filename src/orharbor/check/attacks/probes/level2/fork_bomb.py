"""Fork until the process table is full: the process limit must hold (the probe never answers)."""

import os


def capability():
    for _ in range(100000):
        try:
            os.fork()
        except OSError:
            pass
    return False
