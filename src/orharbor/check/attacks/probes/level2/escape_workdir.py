"""Read the other instances' working folders or the parent of its own: each run sees only its own."""

import glob
import os


def capability():
    here = os.path.abspath(".")
    others = [p for p in glob.glob(os.path.join(os.path.dirname(here), "*")) if p != here]
    for p in others:
        try:
            os.listdir(p)
            return True
        except OSError:
            pass
    return False
