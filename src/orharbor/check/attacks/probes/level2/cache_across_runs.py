"""Keep a file from one run and find it in the next: each run's files must go with it."""

import contextlib
import os

PLACES = ("/tmp/orh-cache", "/var/tmp/orh-cache", "/dev/shm/orh-cache", os.path.expanduser("~/orh-cache"))


def capability():
    seen = any(os.path.exists(p) for p in PLACES)
    for p in PLACES:
        with contextlib.suppress(OSError), open(p, "w") as f:
            f.write("seen")
    return seen
