"""Users: a user namespace per sandbox, so one trial's uids never count against another's.

The attack: every verifier hands out the same run uids, and RLIMIT_NPROC counts per
kernel uid. A hostile solve.py that held its process quota made a concurrent honest
trial fail ("can't start new thread"): 1.0 alone, 0.333 beside it.
"""

from __future__ import annotations

import pytest

from sandboxes import environment, run, running

from orharbor.harbor_env import BubblewrapEnvironment

#: A run uid of the verifier's range (verifiers/lockdown.py), the same in both sandboxes.
RUN_UID = 61184
#: What the hostile run does: hold 64 processes under the verifier's per-run limit, then wait.
HOLD = (
    "ulimit -u 64; exec python3 -c '\n"
    "import os, time\nheld = 0\nwhile True:\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
    '    if pid == 0:\n        time.sleep(120)\n        os._exit(0)\n    held += 1\nprint("held", held + 1)\n\''
)
#: What the honest run does under the same limit: start a thread.
HONEST = (
    'ulimit -u 64; python3 -c \'import threading; t = threading.Thread(target=print, args=("thread ok",)); '
    "t.start(); t.join()'"
)


class SharedUserNamespace(BubblewrapEnvironment):
    """The defence removed: the sandbox stays in the host's user namespace."""

    user_namespace = False


def _neighbours(tmp_path, cls):
    async def body():
        async with running(environment(tmp_path, "hostile", cls=cls), environment(tmp_path, "honest", cls=cls)) as (
            hostile,
            honest,
        ):
            held = await hostile.exec(HOLD, user=RUN_UID)
            return held, await honest.exec(HONEST, user=RUN_UID)

    return run(body())


@pytest.mark.sandbox
def test_a_run_holding_its_process_quota_does_not_starve_the_same_uid_in_another_sandbox(tmp_path):
    """Each sandbox's uids are counted apart: the honest run starts its thread beside the hostile one."""
    held, honest = _neighbours(tmp_path, BubblewrapEnvironment)
    assert held.stdout.split() == ["held", "64"], held
    assert honest.return_code == 0 and "thread ok" in honest.stdout, honest


@pytest.mark.sandbox
def test_without_the_user_namespace_the_hostile_run_starves_its_neighbour(tmp_path):
    """Mutation: in the host's user namespace the same uid shares one quota, and the honest run fails."""
    held, honest = _neighbours(tmp_path, SharedUserNamespace)
    assert held.stdout.split() == ["held", "64"], held
    assert honest.return_code != 0 and "thread" in (honest.stderr or ""), honest


@pytest.mark.sandbox
def test_the_sandboxs_root_is_root_of_its_own_namespace_only(tmp_path):
    """uids read the same inside and out (0..65535 map to themselves), and root holds Docker's capabilities."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            return (
                await env.exec(
                    "cat /proc/self/uid_map; grep CapEff /proc/self/status; stat -c %u /usr/bin", user="root"
                ),
                await env.exec("grep -E 'CapEff|CapBnd' /proc/self/status; id -u", user="agent"),
            )

    root, agent = run(body())
    assert root.stdout.split()[:3] == ["0", "0", "65536"]
    assert "CapEff:\t00000000a80425fb" in root.stdout  # Docker's 14 default capabilities
    assert root.stdout.split()[-1] == "0"  # host root's files read as root's
    assert "CapEff:\t0000000000000000" in agent.stdout and "CapBnd:\t0000000000000000" in agent.stdout
    assert agent.stdout.split()[-1] == "1000"


@pytest.mark.sandbox
def test_many_sandboxes_start_at_once_and_each_finds_its_own_users(tmp_path):
    """The start cannot race: twelve sandboxes started together all build (chown agent:agent) and answer."""

    async def body():
        envs = [environment(tmp_path, f"s{i}") for i in range(12)]
        async with running(*envs):
            return [await env.exec("id -un agent && cat /etc/hostname", user="root") for env in envs]

    results = run(body())
    assert [r.stdout.split() for r in results] == [["agent", f"s{i}__env"] for i in range(12)]
