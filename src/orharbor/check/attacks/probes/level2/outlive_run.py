"""Leave a daemon behind that keeps a heartbeat, and find it alive in the next run.

Every process of a run must end with it.
"""

import contextlib
import os
import time

BEATS = ("/tmp/orh-heartbeat", "/dev/shm/orh-heartbeat")


def capability():
    alive = False
    for beat in BEATS:
        try:
            alive = alive or time.time() - os.stat(beat).st_mtime < 1.0
        except OSError:
            pass
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for _ in range(6000):
                for beat in BEATS:
                    with contextlib.suppress(OSError), open(beat, "w") as f:
                        f.write("x")
                time.sleep(0.01)
        os._exit(0)
    time.sleep(0.2)
    return alive
