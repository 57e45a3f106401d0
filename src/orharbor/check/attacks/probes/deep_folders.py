"""Folder chains deeper than Python's recursion limit, where a verifier might clean up recursively.

As a level-2 probe it builds them in its run's working folder and in /tmp, then
answers (an honest 0.0 must stay 0.0); the deep-reward-path attack calls
``build_chains`` at the reward paths during the agent phase, and the
deep-artifacts and artifact-chain attacks call it with ``depth=1100`` in
/logs/artifacts and at the deliverable: deeper than Python's recursion limit,
short enough (2,200 characters) for the whole chain to be copied to the host.
"""

import os


def build_chains(tops, depth=3000):
    for top in tops:
        try:
            os.makedirs(top, exist_ok=True)
            fd = os.open(top, os.O_RDONLY)
            for _ in range(depth):
                os.mkdir("d", dir_fd=fd)
                fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
                os.close(old)
            os.close(fd)
        except OSError:
            pass


def capability():
    build_chains(("deep", "/tmp/orh-deep-run"))
    return True
