"""Create 50,000 files: the run's file count limit must stop it."""

import os


def capability():
    os.mkdir("many")
    for i in range(50000):
        open(os.path.join("many", str(i)), "w").close()
    return True
