"""Keep a marker for the next run in shared folders and world-writable files the agent prepared.

The lockdown must close every folder a run could write outside its own.
"""

import os

PLACES = (
    "/tmp/orh-share",
    "/var/tmp/orh-share",
    "/dev/shm/orh-share",
    "/home/agent/orh-share",
    "/app/orh-share",
    "/logs",
    "/logs/agent",
    "/logs/artifacts",
    "/logs/verifier",
    "/tmp",
    "/var/tmp",
)
FILES = ("/app/orh-cache-file", "/home/agent/orh-cache-file", "/tmp/orh-cache-file")


def capability():
    seen = False
    for p in PLACES:
        seen = seen or os.path.exists(os.path.join(p, "orh-marker"))
        try:
            os.makedirs(os.path.join(p, "orh-nest"), exist_ok=True)
            os.chmod(os.path.join(p, "orh-nest"), 0o1777)
            with open(os.path.join(p, "orh-marker"), "w") as f:
                f.write("seen")
        except OSError:
            pass
    for p in FILES:
        try:
            with open(p, "r+") as f:
                seen = seen or f.read() == "seen"
                f.seek(0)
                f.write("seen")
        except OSError:
            pass
    return seen
