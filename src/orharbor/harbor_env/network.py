"""The sandbox's network: a network namespace of its own in every mode, the host's loopback out of reach.

Docker's default: every container gets its own network namespace. ``none``
leaves it a loopback interface only; the default bridge adds one interface
behind NAT, so the container reaches the outside world and the host's
non-loopback addresses, but never the host's ``127.0.0.1``, where a Dask
scheduler, a local model proxy or a concurrent trial's service may listen.

Here:

- ``no-network``: a fresh namespace with its loopback interface only;
- ``public``: a fresh namespace plus user-mode networking by ``slirp4netns``
  (what rootless Podman uses): one interface ``tap0`` (10.0.2.100/24, gateway
  10.0.2.2, DNS forwarder 10.0.2.3) whose traffic leaves from the host's
  network stack as ordinary sockets of the ``slirp4netns`` process. It runs
  with ``--disable-host-loopback`` (a connection to 10.0.2.2, the alias of the
  host's loopback, is refused), ``--enable-sandbox`` (its own mount namespace,
  capabilities dropped) and ``--enable-seccomp``;
- ``allowlist``: not offered (the capabilities say so, and Harbor refuses the
  trial before it starts).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from orharbor.errors import UserError

#: The DNS forwarder slirp4netns answers on, inside the sandbox.
DNS_SERVER = "10.0.2.3"
#: Large frames cost slirp4netns fewer copies (its documented maximum is 65521).
MTU = 65520
#: slirp4netns's own hardening: the host's loopback refused, its own mount namespace without capabilities, seccomp.
SLIRP_OPTIONS = ("--disable-host-loopback", "--enable-sandbox", "--enable-seccomp")
#: slirp4netns starts in a mount namespace of its own whose mounts propagate nowhere: its
#: ``--enable-sandbox`` unmounts the old root, and from the host's namespace, where ``/run``
#: is shared, that unmount reached the host (a ``/run/netns`` mount of podman's vanished).
PRIVATE_MOUNTS = ("unshare", "--mount", "--propagation", "private", "--")
#: How long slirp4netns may take to bring the interface up.
READY_TIMEOUT_S = 30.0


class NetworkUnavailable(UserError):
    """slirp4netns is missing or cannot serve the sandbox's network namespace."""


def resolv_conf(public: bool) -> str:
    """The sandbox's /etc/resolv.conf: slirp4netns's forwarder, or nothing to ask offline."""
    return f"nameserver {DNS_SERVER}\n" if public else ""


def require_slirp4netns() -> str:
    """Path of slirp4netns, or a clear error saying how to install it."""
    path = shutil.which("slirp4netns")
    if path is None:
        raise NetworkUnavailable("a public sandbox network needs slirp4netns (user-mode networking, so the "
                                 "host's loopback stays out of reach); install it with "
                                 "`apt-get install -y slirp4netns`")
    return path


@dataclass
class UserModeNetwork:
    """A running slirp4netns serving one sandbox's network namespace."""

    process: subprocess.Popen
    exit_fd: int

    @classmethod
    def attach(cls, netns_fd: int) -> "UserModeNetwork":
        """Start slirp4netns on the network namespace open as ``netns_fd`` and wait until ``tap0`` is up."""
        binary = require_slirp4netns()
        ready_read, ready_write = os.pipe()
        exit_read, exit_write = os.pipe()
        try:
            process = subprocess.Popen(
                [*PRIVATE_MOUNTS, binary, "--configure", f"--mtu={MTU}", *SLIRP_OPTIONS, "--ready-fd", str(ready_write),
                 "--exit-fd", str(exit_read),
                 "--netns-type=path", f"/proc/self/fd/{netns_fd}", "tap0"],
                pass_fds=(ready_write, exit_read, netns_fd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, start_new_session=True)
        finally:
            os.close(ready_write)
            os.close(exit_read)
        network = cls(process, exit_write)
        try:
            ready = _read_with_timeout(ready_read, READY_TIMEOUT_S)
        finally:
            os.close(ready_read)
        if ready != b"1":
            process.kill()
            stderr = process.communicate()[1].decode(errors="replace").strip()
            network.close()
            raise NetworkUnavailable(f"slirp4netns did not bring up the sandbox's network: {stderr or 'no reason'}")
        return network

    def close(self) -> None:
        """Stop slirp4netns (closing its exit fd asks it to leave; a kill makes sure)."""
        try:
            os.close(self.exit_fd)
        except OSError:
            pass
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()


def _read_with_timeout(fd: int, timeout: float) -> bytes:
    import select

    ready, _, _ = select.select([fd], [], [], timeout)
    return os.read(fd, 1) if ready else b""
