"""Sleep past the run's time limit: the run must be stopped, and score as a failure."""

import time


def capability():
    time.sleep(10**6)
    return True
