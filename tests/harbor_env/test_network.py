"""Network: a namespace of the sandbox's own in every mode; the host's loopback is out of reach.

The attack: a public sandbox used to share the host's network namespace, so an agent
reached a listener on the host's 127.0.0.1 (a Dask scheduler, a local model proxy, a
concurrent trial's service).
"""

from __future__ import annotations

import ipaddress
import json
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
    monkeypatch.setattr(
        network, "SLIRP_OPTIONS", tuple(o for o in network.SLIRP_OPTIONS if o != "--disable-host-loopback")
    )
    loopback = Listener("127.0.0.1")
    assert _probe(tmp_path, [f"10.0.2.2:{loopback.port}"])[f"10.0.2.2:{loopback.port}"] == "TOKEN"


@pytest.mark.sandbox
def test_public_dns_names_the_hosts_upstream_resolvers_and_offline_has_only_loopback(tmp_path):
    """resolv.conf lists the host's non-loopback nameservers (Docker's rule), never slirp4netns's disabled alias;
    a no-network sandbox has no interface but lo and no nameserver."""

    async def body():
        async with running(
            environment(tmp_path, "pub", network=NetworkMode.PUBLIC),
            environment(tmp_path, "off", network=NetworkMode.NO_NETWORK),
        ) as (public, offline):
            return (
                [
                    await public.exec(c, user="agent")
                    for c in ("cat /etc/resolv.conf", "tail -n +3 /proc/net/dev | cut -d: -f1")
                ],
                [
                    await offline.exec(c, user="agent")
                    for c in ("cat /etc/resolv.conf", "tail -n +3 /proc/net/dev | cut -d: -f1")
                ],
            )

    (public_dns, public_links), (offline_dns, offline_links) = run(body())
    assert public_dns.stdout == network.resolv_conf(public=True)
    listed = [line.split()[1] for line in public_dns.stdout.splitlines()]
    assert listed and not any(ipaddress.ip_address(a).is_loopback or a == "10.0.2.3" for a in listed)
    assert public_links.stdout.split() == ["lo", "tap0"]
    assert offline_dns.stdout.strip() == "" and offline_links.stdout.split() == ["lo"]


def _conf(tmp_path, name: str, text: str | None) -> str:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("host", "systemd", "expected"),
    [
        pytest.param(
            "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n",
            None,
            ["8.8.8.8", "8.8.4.4"],
            id="loopback-only-no-systemd-upstream",
        ),
        pytest.param(
            "# comment\nnameserver 127.0.0.1\nnameserver 192.0.2.10 # office\nnameserver ::1\n"
            "nameserver 2001:db8::53\nnameserver 0.0.0.0\nnameserver not-an-address\nnameserver 10.1.2.3\n",
            "nameserver 198.51.100.1\n",
            ["192.0.2.10", "10.1.2.3"],
            id="mixed-keeps-the-non-loopback-ipv4",
        ),
        pytest.param(
            "nameserver 127.0.0.53\n",
            "nameserver 127.0.0.1\nnameserver 198.51.100.1\nnameserver 198.51.100.2\n",
            ["198.51.100.1", "198.51.100.2"],
            id="systemd-upstream",
        ),
        pytest.param(
            "nameserver ::1\n",
            "nameserver ::1\nnameserver 127.0.0.53\n",
            ["8.8.8.8", "8.8.4.4"],
            id="ipv6-loopback-dropped-nothing-usable",
        ),
        pytest.param(None, None, ["8.8.8.8", "8.8.4.4"], id="no-files"),
        pytest.param("", "nameserver 198.51.100.1\n", ["198.51.100.1"], id="empty-host-file-means-localhost"),
        pytest.param(
            "".join(f"nameserver 192.0.2.{i}\n" for i in range(1, 6)),
            None,
            ["192.0.2.1", "192.0.2.2", "192.0.2.3"],
            id="at-most-three",
        ),
    ],
)
def test_nameservers_follow_dockers_rule(tmp_path, host, systemd, expected):
    """Loopback (and IPv6, unspecified, malformed) nameservers dropped; a host with none usable reads
    systemd-resolved's upstream file; nothing usable there either falls back to 8.8.8.8 and 8.8.4.4."""
    host_path, systemd_path = _conf(tmp_path, "host.conf", host), _conf(tmp_path, "systemd.conf", systemd)
    assert network.nameservers(host_path, systemd_path) == expected
    assert network.resolv_conf(True, host_path, systemd_path) == "".join(f"nameserver {a}\n" for a in expected)
    assert network.resolv_conf(False, host_path, systemd_path) == ""


#: Run in a network and mount namespace of its own: the host's resolver moved to its loopback (a resolv.conf
#: naming it bind-mounted over /etc/resolv.conf, a DNS-like server there recording what it receives), then a
#: public sandbox asks slirp4netns's DNS alias 10.0.2.3:53 over UDP and TCP. Nothing here touches the host's
#: network or its /etc/resolv.conf. "mutated" starts slirp4netns without --disable-dns (as before the defence).
DNS_ALIAS_PROBE = r'''
import asyncio, json, socket, subprocess, sys, threading
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from harbor.models.task.config import NetworkMode
from sandboxes import environment, running
from orharbor.harbor_env import network
resolver, mode, scratch, wait = sys.argv[2], sys.argv[3], Path(sys.argv[4]), float(sys.argv[5])
if mode == "mutated":
    network.SLIRP_OPTIONS = tuple(o for o in network.SLIRP_OPTIONS if o != "--disable-dns")
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
(scratch / "host-resolv.conf").write_text(f"nameserver {resolver}\n")
subprocess.run(["mount", "--bind", str(scratch / "host-resolv.conf"), "/etc/resolv.conf"], check=True)
received, arrived = [], threading.Event()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind((resolver, 53))
tcp = socket.create_server((resolver, 53))
def answer_udp():
    while True:
        query, peer = udp.recvfrom(4096)
        received.append(["udp", query.hex()])
        arrived.set()
        udp.sendto(query[:2] + b"\x81\x80" + query[4:], peer)  # the query back, flagged as an answer
def answer_tcp():
    while True:
        connection, _ = tcp.accept()
        received.append(["tcp", ""])
        arrived.set()
        connection.close()
threading.Thread(target=answer_udp, daemon=True).start()
threading.Thread(target=answer_tcp, daemon=True).start()
ASK = """import socket, sys
query, wait = bytes.fromhex(sys.argv[1]), float(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(wait)
try:
    s.sendto(query, ("10.0.2.3", 53))
    print(s.recv(512).hex())
except OSError as exc:
    print("no-answer", type(exc).__name__)
try:
    socket.create_connection(("10.0.2.3", 53), timeout=wait).close()
except OSError:
    pass
"""
QUERY = bytes.fromhex("4f5201000001000000000000076578616d706c6503636f6d0000010001")  # A example.com
async def body():
    async with running(environment(scratch, "dns", network=NetworkMode.PUBLIC)) as (env,):
        await env.exec(f"cat > /tmp/ask.py <<'EOF'\n{ASK}EOF", user="agent")
        asked = await env.exec(f"python3 /tmp/ask.py {QUERY.hex()} {wait}", user="agent")
        # slirp4netns still runs: a datagram it forwarded late would still arrive here
        await asyncio.to_thread(arrived.wait, wait)
        resolv = await env.exec("cat /etc/resolv.conf", user="agent")
        return asked.stdout.strip(), resolv.stdout
answer, resolv = asyncio.run(body())
print(json.dumps({"query": QUERY.hex(), "received": received, "answer": answer, "resolv": resolv}))
'''

#: How long the defended run waits for what must not arrive (a forwarded datagram arrives in milliseconds).
NEGATIVE_WAIT_S = 5.0


def _loopback_resolver_sees(tmp_path, resolver: str, mutated: bool) -> dict:
    """What a DNS server on ``resolver``:53, the host's only nameserver, receives from a public sandbox."""
    scratch = tmp_path / ("mutated" if mutated else "defended")
    scratch.mkdir()
    script = scratch / "dns_alias_probe.py"
    script.write_text(DNS_ALIAS_PROBE)
    result = subprocess.run(
        [
            "unshare",
            "--net",
            "--mount",
            "--propagation",
            "private",
            "--",
            sys.executable,
            str(script),
            str(Path(__file__).parent),
            resolver,
            "mutated" if mutated else "defended",
            str(scratch),
            str(NEGATIVE_WAIT_S),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.sandbox
def test_the_dns_alias_does_not_reach_a_resolver_on_the_hosts_loopback(tmp_path):
    """With the host's resolver on 127.0.0.53 (systemd-resolved's stub), a query to 10.0.2.3:53 reaches nothing:
    the loopback server receives no datagram and no connection within the wait, the sandbox gets no answer, and
    its resolv.conf names no loopback address. The same experiment without --disable-dns, run first as the
    control, does reach it, so the silence is the defence's and not a broken experiment's."""
    control = _loopback_resolver_sees(tmp_path, "127.0.0.53", mutated=True)
    assert ["udp", control["query"]] in control["received"]
    assert control["answer"].startswith(control["query"][:4] + "8180")

    defended = _loopback_resolver_sees(tmp_path, "127.0.0.53", mutated=False)
    assert defended["received"] == []
    assert defended["answer"].startswith("no-answer")
    assert defended["resolv"].startswith("nameserver ")
    assert "127." not in defended["resolv"] and "10.0.2.3" not in defended["resolv"]


@pytest.mark.sandbox
def test_without_disable_dns_the_dns_alias_reaches_the_hosts_127_0_0_1(tmp_path):
    """Mutation: slirp4netns's DNS alias forwards 10.0.2.3:53, UDP and TCP, to the host's nameserver even on
    127.0.0.1, the loopback that --disable-host-loopback otherwise keeps out of reach."""
    seen = _loopback_resolver_sees(tmp_path, "127.0.0.1", mutated=True)
    assert ["udp", seen["query"]] in seen["received"] and ["tcp", ""] in seen["received"]
    assert seen["answer"].startswith(seen["query"][:4] + "8180")


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
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            sys.executable,
            "-c",
            PROPAGATION_PROBE,
            here,
            "mutated" if mutated else "defended",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
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
