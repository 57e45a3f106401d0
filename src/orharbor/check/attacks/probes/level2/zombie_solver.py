"""Ask a process the agent left behind (a zombie-looking thread group) for help.

Every process of the agent user must be ended before the verifier runs.
"""

import socket


def capability():
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1.0)
        s.connect("\0orh-zombie-solver")
        return s.recv(5) == b"alive"
    except OSError:
        return False
