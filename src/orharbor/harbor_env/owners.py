"""Owners: every sandbox's user namespace belongs to an unprivileged host uid of its own.

Rootless podman's default: a container's user namespace is created by an
unprivileged user, so the kernel charges what the container's users hold
(``struct ucounts``: inotify instances and watches, POSIX message-queue bytes,
pending signals, processes, user namespaces) to that user one level up, and
to no one else. Docker with ``userns-remap`` does the same with its
``dockremap`` user.

bubblewrap started by host root makes host root the owner of every sandbox's
namespace: all sandboxes and host root then share one budget per kind
(128 inotify instances here, 800 KiB of message queues). One agent made host
root's ``inotify_init1`` fail, and a hostile ``solve.py`` signalled values to a
concurrent trial by how many instances it held.

Here every running sandbox leases one uid of :data:`OWNER_RANGE` (a range no
account of the host uses, 65,536 uids from ``0x70000000``; ``/etc/subuid``'s
entry for ``orharbor`` replaces it where one exists), held by an ``flock`` on
a lease file for the sandbox's life, so concurrent processes never share one.
bubblewrap runs as that uid; host root writes the namespace's maps (uids and
gids 0..65535 to themselves, and the owner as 65536, which bubblewrap needs
while it builds the root) before the sandbox starts, as ``newuidmap`` does
for rootless podman.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orharbor.harbor_env.users import MAPPED_IDS

#: (first uid, count) of the owners' range, unless /etc/subuid names one for orharbor.
OWNER_RANGE = (0x70000000, 65536)
#: The name /etc/subuid may give a range to.
SUBUID_NAME = "orharbor"
#: The uid the owner has inside its sandbox (just past the image's 0..65535, :func:`.users.id_map`).
OWNER_INSIDE = MAPPED_IDS


class NoOwnerFree(RuntimeError):
    """Every uid of the owners' range is leased by a running sandbox."""


@dataclass
class Owner:
    """A leased owner uid; :meth:`release` (or the process's end) gives it back."""

    uid: int
    _lease: int | None

    def release(self) -> None:
        if self._lease is not None:
            os.close(self._lease)  # closing drops the flock
            self._lease = None


def owner_range(subuid: Path = Path("/etc/subuid")) -> tuple[int, int]:
    """(first, count) of the owners' uids: /etc/subuid's ``orharbor`` entry, else :data:`OWNER_RANGE`."""
    with contextlib.suppress(OSError):
        for line in subuid.read_text().splitlines():
            fields = line.strip().split(":")
            if (
                len(fields) == 3
                and fields[0] == SUBUID_NAME
                and fields[1].isdigit()
                and fields[2].isdigit()
                and int(fields[2]) > 0
            ):
                return int(fields[1]), int(fields[2])
    return OWNER_RANGE


def lease_folder() -> Path:
    """Where lease files live: /run (one per boot, root's), else the temporary folder."""
    run = Path("/run")
    base = run if run.is_dir() and os.access(run, os.W_OK) else Path(tempfile.gettempdir())
    folder = base / "orharbor-owners"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def lease(folder: Path | None = None, uids: tuple[int, int] | None = None) -> Owner:
    """An owner uid no running sandbox holds, from a random start so concurrent leases rarely meet."""
    folder = folder or lease_folder()
    first, count = uids or owner_range()
    start = random.randrange(count)
    for step in range(count):
        uid = first + (start + step) % count
        fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Owner(uid, fd)
    raise NoOwnerFree(f"all {count} owner uids from {first} are held by running sandboxes")
