"""Spin the CPU past the run's time limit: the run must be stopped, and score as a failure."""


def capability():
    while True:
        pass
