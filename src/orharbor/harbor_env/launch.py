"""Starting bubblewrap in a user namespace of its own, mapped before anything runs in it.

bubblewrap creates the user namespace and waits (``--userns-block-fd``) while
its parent writes the uid and gid maps (:func:`orharbor.harbor_env.users.map_user_namespace`)
and, through ``before_release``, keeps whatever it needs of the new sandbox
(its namespaces, a pidfd) while the child cannot have exited yet, so a
recycled process id can never be mistaken for it. Used by the Harbor
environment and by the one-shot sandboxes of ``orharbor verify`` and
``validate-specs``.
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable

from orharbor.harbor_env import users

START_TIMEOUT_S = 30.0


def start_bwrap(
    bwrap: str,
    args: list[str],
    command: list[str],
    pass_fds: tuple[int, ...] = (),
    *,
    before_release: Callable[[int], None] | None = None,
    user_namespace: bool = True,
    owner: int | None = None,
    **popen,
) -> subprocess.Popen:
    """Start ``bwrap args... command`` in a fresh mapped user namespace; close ``pass_fds`` here.

    ``popen`` goes to :class:`subprocess.Popen` (stdin, stdout, stderr...).
    With an ``owner`` (:mod:`.owners`) bubblewrap runs as that unprivileged
    uid, so the namespace is that uid's; inside, the owner is uid 65536, and
    ``command`` starts as it (:func:`as_root` makes it root first).
    ``user_namespace=False`` leaves the sandbox in the host's user namespace
    (only for tests that show what the namespace stops). Raises RuntimeError
    with bubblewrap's own message if it does not start.
    """
    info_read, info_write = os.pipe()
    block_read, block_write = os.pipe()
    passed = (info_write, block_read, *pass_fds)
    userns = (
        ["--unshare-user", "--userns-block-fd", str(block_read)] if user_namespace else ["--block-fd", str(block_read)]
    )
    as_owner = as_user(owner) if owner is not None and user_namespace else []
    if as_owner:
        popen["cwd"] = "/"
    try:
        process = subprocess.Popen(
            [*as_owner, bwrap, *userns, "--info-fd", str(info_write), *args, *command],
            pass_fds=passed,
            start_new_session=True,
            **popen,
        )
    finally:
        for fd in passed:
            os.close(fd)
    try:
        info = _read_json(info_read, START_TIMEOUT_S)
        if info is None or "child-pid" not in info:
            process.kill()
            _, stderr = process.communicate()
            text = stderr.decode(errors="replace").strip() if isinstance(stderr, bytes) else (stderr or "")
            raise RuntimeError(f"bubblewrap did not start the sandbox: {text or 'no reason given'}")
        pid = int(info["child-pid"])
        if user_namespace:
            users.map_user_namespace(pid, owner)
        if before_release is not None:
            before_release(pid)
        os.write(block_write, b"1")
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait()
        raise
    finally:
        os.close(info_read)
        os.close(block_write)
    return process


def as_user(uid: int) -> list[str]:
    """The host's ``setpriv`` (util-linux) running what follows as ``uid`` (gid ``uid``, no groups).

    What ``Popen(user=, group=, extra_groups=[])`` does, in the child after exec instead of before it:
    CPython forks rather than vforks a child whose credentials it changes, and a fork copies the
    page tables of a check's whole process (18 ms a sandbox, 6% of its CPU, under py-spy).
    """
    return [_setpriv(), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


@functools.cache
def _setpriv() -> str:
    found = shutil.which("setpriv", path=os.defpath + ":/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError("setpriv (util-linux) is missing: it starts each sandbox as its unprivileged owner")
    return found


def as_root(command: list[str]) -> list[str]:
    """``command`` started as the sandbox's root by the owner's bubblewrap (util-linux's ``setpriv``, in every
    Debian image), keeping the capabilities bubblewrap gave: what Docker's PID 1 is."""
    return ["setpriv", "--reuid=0", "--regid=0", "--clear-groups", "--", *command]


def readable(content: bytes) -> int:
    """A read descriptor holding ``content`` (an unlinked temporary file), for bubblewrap to read once."""
    import tempfile

    with tempfile.TemporaryFile() as f:
        f.write(content)
        f.flush()
        fd = os.open(f"/proc/self/fd/{f.fileno()}", os.O_RDONLY)
    return fd


def _read_json(fd: int, timeout_s: float) -> dict | None:
    """The first JSON object written to ``fd`` (bubblewrap's --info-fd), or None if it closes or times out."""
    deadline = time.monotonic() + timeout_s
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        data += chunk
        try:
            value = json.loads(data)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None
