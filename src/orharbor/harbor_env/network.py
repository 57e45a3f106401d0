"""The sandbox's network: a network namespace of its own in every mode, the host's loopback out of reach.

Docker's default: every container gets its own network namespace. ``none``
leaves it a loopback interface only; the default bridge adds one interface
behind NAT, so the container reaches the outside world and the host's
non-loopback addresses, but never the host's ``127.0.0.1``, where a Dask
scheduler, a local model proxy or a concurrent trial's service may listen.
Its ``/etc/resolv.conf`` is the host's minus every loopback nameserver
(libnetwork's resolvconf): when the host names only loopback resolvers
(systemd-resolved's ``127.0.0.53``), the upstream list systemd-resolved writes
to ``/run/systemd/resolve/resolv.conf``; with nothing usable left, Google's
``8.8.8.8`` and ``8.8.4.4``.

Here:

- ``no-network``: a fresh namespace with its loopback interface only, and an
  empty ``/etc/resolv.conf``;
- ``public``: a fresh namespace plus user-mode networking by ``slirp4netns``
  (what rootless Podman uses): one interface ``tap0`` (10.0.2.100/24, gateway
  10.0.2.2) whose traffic leaves from the host's network stack as ordinary
  sockets of the ``slirp4netns`` process. It runs with
  ``--disable-host-loopback`` (a connection to 10.0.2.2, the alias of the
  host's loopback, is refused), ``--disable-dns`` (its DNS alias 10.0.2.3
  forwards port 53 to the host's first nameserver, which
  ``--disable-host-loopback`` does not stop: a host on ``127.0.0.53`` or
  ``127.0.0.1`` handed the sandbox its loopback resolver), ``--enable-sandbox``
  (its own mount namespace, capabilities dropped) and ``--enable-seccomp``.
  The sandbox's ``/etc/resolv.conf`` lists Docker's nameservers as above,
  IPv4 only (``tap0`` has no IPv6), at most three (glibc reads no more);
  they are asked through slirp4netns like any other host on the network;
- ``allowlist``: not offered (the capabilities say so, and Harbor refuses the
  trial before it starts).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
from dataclasses import dataclass

from orharbor.errors import UserError

#: The host's resolver configuration, and the upstream list systemd-resolved writes beside its 127.0.0.53 stub.
HOST_RESOLV_CONF = "/etc/resolv.conf"
SYSTEMD_RESOLV_CONF = "/run/systemd/resolve/resolv.conf"
#: Docker's nameservers when the host names none the sandbox can use.
FALLBACK_NAMESERVERS = ("8.8.8.8", "8.8.4.4")
#: glibc's resolver reads no more nameservers than this (MAXNS).
MAX_NAMESERVERS = 3
#: Large frames cost slirp4netns fewer copies (its documented maximum is 65521).
MTU = 65520
#: slirp4netns's own hardening: the host's loopback refused, no DNS alias (10.0.2.3:53 would reach the host's
#: resolver, on its loopback if that is where it listens), its own mount namespace without capabilities, seccomp.
SLIRP_OPTIONS = ("--disable-host-loopback", "--disable-dns", "--enable-sandbox", "--enable-seccomp")
#: slirp4netns starts in a mount namespace of its own whose mounts propagate nowhere: its
#: ``--enable-sandbox`` unmounts the old root, and from the host's namespace, where ``/run``
#: is shared, that unmount reached the host (a ``/run/netns`` mount of podman's vanished).
PRIVATE_MOUNTS = ("unshare", "--mount", "--propagation", "private", "--")
#: How long slirp4netns may take to bring the interface up.
READY_TIMEOUT_S = 30.0


class NetworkUnavailable(UserError):
    """slirp4netns is missing or cannot serve the sandbox's network namespace."""


def resolv_conf(public: bool, host: str = HOST_RESOLV_CONF, systemd: str = SYSTEMD_RESOLV_CONF) -> str:
    """The sandbox's /etc/resolv.conf: the nameservers of :func:`nameservers`, or nothing to ask offline."""
    return "".join(f"nameserver {address}\n" for address in nameservers(host, systemd)) if public else ""


def nameservers(host: str = HOST_RESOLV_CONF, systemd: str = SYSTEMD_RESOLV_CONF) -> list[str]:
    """Docker's choice of the sandbox's nameservers, from the resolv.conf files at ``host`` and ``systemd``.

    The usable nameservers of ``host``; if it has none (only loopback ones, as
    with systemd-resolved's stub, or none at all, which glibc reads as
    localhost), those of ``systemd``; if that has none either (or is
    missing), :data:`FALLBACK_NAMESERVERS`. Usable: IPv4, neither loopback nor
    unspecified; at most :data:`MAX_NAMESERVERS`.
    """
    return (_usable_nameservers(host) or _usable_nameservers(systemd) or list(FALLBACK_NAMESERVERS))[:MAX_NAMESERVERS]


def _usable_nameservers(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 2 or fields[0] != "nameserver":
            continue
        try:
            address = ipaddress.ip_address(fields[1])
        except ValueError:
            continue
        if (
            address.version == 4
            and not address.is_loopback
            and not address.is_unspecified
            and str(address) not in found
        ):
            found.append(str(address))
    return found


def require_slirp4netns() -> str:
    """Path of slirp4netns, or a clear error saying how to install it."""
    path = shutil.which("slirp4netns")
    if path is None:
        raise NetworkUnavailable(
            "a public sandbox network needs slirp4netns (user-mode networking, so the "
            "host's loopback stays out of reach); install it with "
            "`apt-get install -y slirp4netns`"
        )
    return path


@dataclass
class UserModeNetwork:
    """A running slirp4netns serving one sandbox's network namespace."""

    process: subprocess.Popen[bytes]
    exit_fd: int

    @classmethod
    def attach(cls, netns_fd: int) -> "UserModeNetwork":
        """Start slirp4netns on the network namespace open as ``netns_fd`` and wait until ``tap0`` is up."""
        binary = require_slirp4netns()
        ready_read, ready_write = os.pipe()
        exit_read, exit_write = os.pipe()
        try:
            process = subprocess.Popen(
                [
                    *PRIVATE_MOUNTS,
                    binary,
                    "--configure",
                    f"--mtu={MTU}",
                    *SLIRP_OPTIONS,
                    "--ready-fd",
                    str(ready_write),
                    "--exit-fd",
                    str(exit_read),
                    "--netns-type=path",
                    f"/proc/self/fd/{netns_fd}",
                    "tap0",
                ],
                pass_fds=(ready_write, exit_read, netns_fd),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
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


def _read_with_timeout(fd: int, timeout_s: float) -> bytes:
    import select

    ready, _, _ = select.select([fd], [], [], timeout_s)
    return os.read(fd, 1) if ready else b""
