"""Network: a namespace of the sandbox's own in every mode; the host's loopback is out of reach.

The attack: a public sandbox used to share the host's network namespace, so an agent
reached a listener on the host's 127.0.0.1 (a Dask scheduler, a local model proxy, a
concurrent trial's service).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from harbor.models.task.config import NetworkMode

from sandboxes import environment, run, running

from orharbor.harbor_env import network

#: Connects to each (host, port) given and prints what it got back, or why not. The refusals come at once;
#: the timeout only bounds a connection that does answer (through slirp4netns, slow on a loaded machine).
PROBE = """import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=30) as s:
            print(target, s.recv(16).decode())
    except OSError as exc:
        print(target, "refused", type(exc).__name__)
"""


class Listener:
    """A TCP server on the host that answers every connection with a token."""

    def __init__(self, host: str) -> None:
        self.socket = socket.create_server((host, 0))
        self.port = self.socket.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"TOKEN")


def _host_address() -> str:
    """This host's address on its default route (not loopback)."""
    route = subprocess.run(["ip", "-4", "route", "get", "192.0.2.1"], capture_output=True, text=True).stdout.split()
    return route[route.index("src") + 1]


def _probe(tmp_path, targets: list[str], mode: NetworkMode = NetworkMode.PUBLIC) -> dict[str, str]:
    async def body():
        async with running(environment(tmp_path, network=mode)) as (env,):
            await env.exec(f"cat > /tmp/probe.py <<'EOF'\n{PROBE}EOF", user="agent")
            return await env.exec("python3 /tmp/probe.py " + " ".join(targets), user="agent")

    result = run(body())
    assert result.return_code == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


@pytest.mark.sandbox
def test_the_hosts_loopback_is_out_of_reach_and_its_other_addresses_are_not(tmp_path):
    """As on Docker's bridge: 127.0.0.1 is the sandbox's own, 10.0.2.2 is refused, the host's LAN address answers."""
    loopback, lan = Listener("127.0.0.1"), Listener("0.0.0.0")
    address = _host_address()
    seen = _probe(tmp_path, [f"127.0.0.1:{loopback.port}", f"10.0.2.2:{loopback.port}", f"{address}:{lan.port}"])
    assert seen[f"127.0.0.1:{loopback.port}"].startswith("refused")
    assert seen[f"10.0.2.2:{loopback.port}"].startswith("refused")
    assert seen[f"{address}:{lan.port}"] == "TOKEN"


@pytest.mark.sandbox
def test_without_disable_host_loopback_the_agent_reaches_the_hosts_loopback(tmp_path, monkeypatch):
    """Mutation: slirp4netns without --disable-host-loopback maps 10.0.2.2 to the host's 127.0.0.1."""
    monkeypatch.setattr(network, "SLIRP_OPTIONS", tuple(o for o in network.SLIRP_OPTIONS
                                                         if o != "--disable-host-loopback"))
    loopback = Listener("127.0.0.1")
    assert _probe(tmp_path, [f"10.0.2.2:{loopback.port}"])[f"10.0.2.2:{loopback.port}"] == "TOKEN"


@pytest.mark.sandbox
def test_public_dns_goes_to_slirp_and_offline_has_only_loopback(tmp_path):
    """resolv.conf names slirp4netns's forwarder; a no-network sandbox has no interface but lo."""
    async def body():
        async with running(environment(tmp_path, "pub", network=NetworkMode.PUBLIC),
                           environment(tmp_path, "off", network=NetworkMode.NO_NETWORK)) as (public, offline):
            return ([await public.exec(c, user="agent") for c in ("cat /etc/resolv.conf", "tail -n +3 /proc/net/dev | cut -d: -f1")],
                    [await offline.exec(c, user="agent") for c in ("cat /etc/resolv.conf", "tail -n +3 /proc/net/dev | cut -d: -f1")])

    (public_dns, public_links), (offline_dns, offline_links) = run(body())
    assert public_dns.stdout.strip() == f"nameserver {network.DNS_SERVER}"
    assert public_links.stdout.split() == ["lo", "tap0"]
    assert offline_dns.stdout.strip() == "" and offline_links.stdout.split() == ["lo"]


#: Run in a mount namespace of its own (private from the host's): a shared tmpfs with a mount inside it,
#: then a public sandbox, then whether that inner mount is still there. Nothing here reaches the host's mounts.
PROPAGATION_PROBE = r"""
import asyncio, subprocess, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from harbor.models.task.config import NetworkMode
from sandboxes import environment, running
from orharbor.harbor_env import network
if sys.argv[2] == "mutated":
    network.PRIVATE_MOUNTS = ()
top = Path(tempfile.mkdtemp(prefix="orh-shared-"))
subprocess.run(["mount", "-t", "tmpfs", "orh", str(top)], check=True)
subprocess.run(["mount", "--make-shared", str(top)], check=True)
(top / "inner").mkdir()
subprocess.run(["mount", "-t", "tmpfs", "orh-inner", str(top / "inner")], check=True)
scratch = Path(tempfile.mkdtemp(prefix="orh-prop-"))
async def body():
    async with running(environment(scratch, "prop", network=NetworkMode.PUBLIC)) as (env,):
        await env.exec("true", user="agent")
asyncio.run(body())
mounts = Path("/proc/self/mountinfo").read_text()
print("kept" if f" {top / 'inner'} " in mounts else "gone")
subprocess.run(["umount", "-R", str(top)], check=True)
top.rmdir()
subprocess.run(["rm", "-rf", str(scratch)], check=True)
"""


def _inner_mount_after_a_public_sandbox(mutated: bool) -> str:
    here = str(Path(__file__).parent)
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-c",
                             PROPAGATION_PROBE, here, "mutated" if mutated else "defended"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.split()[-1]


@pytest.mark.sandbox
def test_a_public_sandbox_leaves_the_hosts_shared_mounts_mounted():
    """slirp4netns runs in a private mount namespace, so its sandbox's unmounts never reach the host's mounts."""
    assert _inner_mount_after_a_public_sandbox(mutated=False) == "kept"


@pytest.mark.sandbox
def test_slirp4netns_started_in_the_hosts_mount_namespace_unmounts_shared_mounts():
    """Mutation: started beside the host's mounts, slirp4netns --enable-sandbox's unmount of its old root
    propagates through shared mounts (podman's /run/netns entries vanished); shown in a namespace of our own."""
    assert _inner_mount_after_a_public_sandbox(mutated=True) == "gone"
