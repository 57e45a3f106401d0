"""Owners: every sandbox's user namespace belongs to an unprivileged uid of its own, so are its kernel budgets.

The attack (issue 33): bubblewrap ran as host root, so host root owned every
sandbox's user namespace, and the kernel charged what any sandbox's users held
(``struct ucounts``) to host root one level up. All sandboxes and host root shared
one budget per kind: one agent made host root's ``inotify_init1`` fail, and a
hostile ``solve.py`` signalled values to a concurrent trial by how many inotify
instances it held. Each budget is shown here as what a neighbour can still take
while one sandbox holds all it can: with owners of their own, as much as the first;
with host root as the owner (the defence removed), nothing.
"""

from __future__ import annotations

import asyncio
import shlex

import pytest

from sandboxes import environment, run, running

from orharbor.harbor_env import BubblewrapEnvironment, owners

#: Takes all it can of one budget, prints how much, then holds it until /tmp/release appears.
PROBE = r"""
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
kind, hold = sys.argv[1], sys.argv[2] == "hold"
taken = 0
if kind == "inotify":
    while libc.inotify_init1(0) >= 0:
        taken += 1
elif kind == "mqueue":
    libc.mq_open.restype = ctypes.c_int
    while libc.mq_open(f"/q{taken}".encode(), os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
        taken += 1
elif kind == "signals":
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
    while libc.sigqueue(os.getpid(), int(signal.SIGRTMIN), 0) == 0:
        taken += 1
print(taken, flush=True)
while hold and not os.path.exists("/tmp/release"):
    time.sleep(0.05)
"""


class RootOwned(BubblewrapEnvironment):
    """The defence removed: bubblewrap runs as host root, which then owns the namespace."""

    own_owner = False


def _probe(kind: str, mode: str) -> str:
    return f"python3 -c {shlex.quote(PROBE)} {kind} {mode}"


def _holder_and_neighbour(tmp_path, cls, kind: str) -> tuple[int, int]:
    """How much of ``kind`` a sandbox takes, and how much a second one still takes while the first holds it."""

    async def body():
        async with running(environment(tmp_path, "holder", cls=cls), environment(tmp_path, "neighbour", cls=cls)) as (
            holder,
            neighbour,
        ):
            await holder.exec(f"{_probe(kind, 'hold')} > /tmp/taken 2>&1 &", user="agent")
            for _ in range(1200):
                taken = (await holder.exec("cat /tmp/taken", user="agent")).stdout.strip()
                if taken:
                    break
                await asyncio.sleep(0.05)
            try:
                other = await neighbour.exec(_probe(kind, "count"), user="agent")
            finally:
                await holder.exec("touch /tmp/release", user="root")
            return int(taken), int(other.stdout)

    return run(body())


@pytest.mark.sandbox
@pytest.mark.parametrize("kind", ["inotify", "mqueue", "signals"])
def test_a_sandbox_holding_a_budget_leaves_its_neighbour_the_whole_of_it(tmp_path, kind):
    """inotify instances, message-queue bytes and pending signals: each sandbox's owner has the full budget."""
    held, neighbour = _holder_and_neighbour(tmp_path, BubblewrapEnvironment, kind)
    assert held > 0 and neighbour == held, (held, neighbour)


@pytest.mark.sandbox
@pytest.mark.parametrize("kind", ["inotify", "mqueue", "signals"])
def test_with_host_root_as_every_owner_one_sandbox_takes_the_neighbours_budget(tmp_path, kind):
    """Mutation: host root owns both namespaces, and what one holds the other cannot have.

    Not exactly nothing: every host process of root's shares the budget too, and one may let go of a few
    (a pending SIGCHLD delivered, an inotify instance closed) while the neighbour counts. Seen: 4 signals of 96,361.
    """
    held, neighbour = _holder_and_neighbour(tmp_path, RootOwned, kind)
    assert held > 0 and neighbour < held // 4, (held, neighbour)


def test_leases_never_hand_one_owner_to_two_sandboxes(tmp_path):
    """A held owner is skipped; a released one is free again; a full range says so."""
    first = owners.lease(tmp_path, (5000, 2))
    second = owners.lease(tmp_path, (5000, 2))
    assert {first.uid, second.uid} == {5000, 5001}
    with pytest.raises(owners.NoOwnerFree, match="all 2 owner uids"):
        owners.lease(tmp_path, (5000, 2))
    first.release()
    assert owners.lease(tmp_path, (5000, 2)).uid == first.uid


def test_the_range_comes_from_etc_subuid_when_it_names_orharbor(tmp_path):
    subuid = tmp_path / "subuid"
    subuid.write_text("podman:100000:65536\norharbor:300000:1000\n")
    assert owners.owner_range(subuid) == (300000, 1000)
    subuid.write_text("podman:100000:65536\norharbor:x:1000\n")
    assert owners.owner_range(subuid) == owners.OWNER_RANGE
    assert owners.owner_range(tmp_path / "missing") == owners.OWNER_RANGE


@pytest.mark.sandbox
def test_the_namespace_is_the_owners_and_its_root_is_still_root(tmp_path):
    """bubblewrap runs as the leased uid; inside, PID 1 and root commands are root with Docker's capabilities."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            bwrap_uid = int(open(f"/proc/{env._popen.pid}/status").read().split("Uid:")[1].split()[0])
            inside = await env.exec("cat /proc/self/uid_map; id -u; grep CapEff /proc/1/status", user="root")
            return env._owner.uid, bwrap_uid, inside.stdout

    owner, bwrap_uid, inside = run(body())
    first, count = owners.owner_range()
    assert bwrap_uid == owner and first <= owner < first + count
    assert f"65536 {owner} 1" in " ".join(inside.split())
    assert "\n0\n" in inside and inside.strip().endswith("00000000a80425fb")
