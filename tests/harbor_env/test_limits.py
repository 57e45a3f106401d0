"""Limits: a cgroup per sandbox and sized file systems, so a hog ends as the sandbox's failure, not the host's.

The attacks (issue 33): every file system of the sandbox was a tmpfs of unbounded size in
host RAM (the agent alone could write about 23.5 GiB on a 23.5 GiB host, and what it wrote
became shared memory owned by no process, so the OOM killer picked host processes), and no
cgroup bounded a sandbox's memory, processes or CPU. Each test runs the attack bounded
(well below what would hurt this machine) and shows the limit stopping it; each mutation
removes the bounds (``bounded = False``) and shows the same attack going through.
"""

from __future__ import annotations

import dataclasses

import pytest
from harbor.models.task.config import EnvironmentConfig

from sandboxes import environment, run, running

from orharbor.harbor_env import BubblewrapEnvironment, cgroups, rootfs

#: Forks children that sleep until it has made ``cap`` of them or a fork fails; prints how many it made.
FORK = (
    "python3 -c 'import os, sys, time\nmade = 0\ncap = int(sys.argv[1])\nwhile made < cap:\n    try:\n"
    "        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n"
    "        os._exit(0)\n    made += 1\nprint(made)' 200"
)
#: Takes 400 MiB of anonymous memory, touching every page.
HOG = "python3 -c 'b = bytearray(400 << 20); print(\"allocated\", len(b))'"
SMALL = EnvironmentConfig(cpus=1.5, memory_mb=128, storage_mb=64)


class FewProcesses(BubblewrapEnvironment):
    """The process limit at 64, so the fork bomb meets it at a size that cannot hurt the host."""

    def _limits(self) -> cgroups.Limits:
        return dataclasses.replace(super()._limits(), pids=64)


class Unbounded(FewProcesses):
    """The defence removed: no cgroup, and every tmpfs at the kernel's default size (half the host's RAM)."""

    bounded = False


def _in(tmp_path, cls, command: str, config: EnvironmentConfig = SMALL, user: str = "agent"):
    async def body():
        async with running(environment(tmp_path, cls=cls, config=config)) as (env,):
            result = await env.exec(command, user=user, timeout_sec=600)
            after = await env.exec("echo still here", user="root")
            return result, after

    return run(body())


@pytest.mark.sandbox
def test_a_fork_bomb_meets_the_sandboxs_process_limit(tmp_path):
    result, after = _in(tmp_path, FewProcesses, FORK)
    assert 0 < int(result.stdout) < 64 and after.stdout == "still here\n", (result, after)


@pytest.mark.sandbox
def test_without_the_cgroup_the_fork_bomb_passes_the_limit(tmp_path):
    """Mutation: nothing stops it before its own cap of 200 (unbounded, it would take the host's process ids)."""
    result, _ = _in(tmp_path, Unbounded, FORK)
    assert int(result.stdout) == 200, result


@pytest.mark.sandbox
def test_a_memory_hog_is_killed_inside_its_sandbox(tmp_path):
    """400 MiB against a 128 MiB task: the OOM killer ends the hog; the sandbox can still be entered."""
    result, after = _in(tmp_path, BubblewrapEnvironment, HOG)
    assert result.return_code == 137 and "allocated" not in result.stdout, result
    assert after.stdout == "still here\n", after


@pytest.mark.sandbox
def test_without_the_cgroup_the_memory_hog_gets_its_memory(tmp_path):
    result, _ = _in(tmp_path, Unbounded, HOG)
    assert result.return_code == 0 and "allocated 419430400" in result.stdout, result


FILL = "head -c 100M /dev/zero > {path}/fill; echo rc=$?; du -m {path}/fill | cut -f1"


@pytest.mark.sandbox
@pytest.mark.parametrize("path", ["/tmp", "/app", "/home/agent"])
def test_a_tmpfs_filler_stops_at_the_tasks_storage_size(tmp_path, path):
    """storage_mb is 64: writing 100 MiB anywhere the agent may write stops at 64 MiB (ENOSPC)."""
    result, after = _in(tmp_path, BubblewrapEnvironment, FILL.format(path=path))
    rc, size = result.stdout.split()
    assert rc != "rc=0" and int(size) <= 64, result
    assert after.stdout == "still here\n"


@pytest.mark.sandbox
def test_dev_shm_is_64_mib_as_in_docker(tmp_path):
    result, _ = _in(tmp_path, BubblewrapEnvironment, FILL.format(path="/dev/shm"), config=EnvironmentConfig())
    rc, size = result.stdout.split()
    assert rc != "rc=0" and int(size) == rootfs.SHM_SIZE >> 20, result


@pytest.mark.sandbox
def test_without_sizes_the_filler_writes_all_of_it_into_host_memory(tmp_path):
    """Mutation: the unsized tmpfs takes the whole 100 MiB (and would take half the host's RAM)."""
    result, _ = _in(tmp_path, Unbounded, FILL.format(path="/tmp"))
    assert result.stdout.split() == ["rc=0", "100"], result


@pytest.mark.sandbox
def test_tmpfs_pages_count_against_the_memory_limit(tmp_path):
    """storage 1 GiB, memory 128 MiB: 300 MiB written to /tmp meet the memory limit (the writer is killed).

    What was written stays charged (no swap), so the sandbox stays at its limit:
    its own failure, as a container's would be; the host's memory is untouched.
    """
    config = EnvironmentConfig(memory_mb=128, storage_mb=1024)

    async def body():
        async with running(environment(tmp_path, config=config)) as (env,):
            result = await env.exec("head -c 300M /dev/zero > /tmp/fill; echo rc=$?", user="agent")
            folder = next(
                f
                for f in env._cgroup.folders
                if (f / "memory.max_usage_in_bytes").exists() or (f / "memory.peak").exists()
            )
            peak = folder / ("memory.max_usage_in_bytes" if not env._cgroup.unified else "memory.peak")
            return result, int(peak.read_text())

    result, peak = run(body())
    assert "rc=0" not in result.stdout, result
    assert peak <= 128 << 20, peak


@pytest.mark.sandbox
def test_the_cgroup_holds_the_tasks_limits_and_every_process(tmp_path):
    """Memory, CPU quota and pids as the task and podman say; PID 1 and every command inside, the door outside."""

    async def body():
        async with running(environment(tmp_path, config=SMALL)) as (env,):
            group = env._cgroup
            values = {}
            for folder in group.folders:
                for name in ("memory.limit_in_bytes", "memory.max", "pids.max", "cpu.cfs_quota_us", "cpu.max"):
                    if (folder / name).exists():
                        values[name] = (folder / name).read_text().strip()
            inside = set(group.processes())
            command = await env.exec("cat /proc/self/cgroup", user="agent")
            return values, inside, env._door.process.pid, env._pid, group.unified, command.stdout, group.name

    values, inside, door, pid1, unified, command, name = run(body())
    if unified:
        assert values["memory.max"] == str(128 << 20) and values["cpu.max"] == "150000 100000"
    else:
        assert values["memory.limit_in_bytes"] == str(128 << 20) and values["cpu.cfs_quota_us"] == "150000"
    assert values["pids.max"] == str(cgroups.PIDS_LIMIT)
    assert pid1 in inside and door not in inside
    assert f"/orharbor/{name}" in command, command


def test_harbor_is_told_the_environment_enforces_cpu_and_memory():
    caps = BubblewrapEnvironment.resource_capabilities()
    assert caps.cpu_limit and caps.memory_limit and caps.fractional_cpus


def test_a_v2_hierarchy_gets_one_folder_with_every_limit(tmp_path, monkeypatch):
    """cgroup v2 (not this machine's): controllers handed down, then memory, swap, pids and CPU in one folder."""
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    real_mkdir = type(tmp_path).mkdir

    def mkdir(self, *args, **kwargs):  # a cgroup file system makes these files itself
        real_mkdir(self, *args, **kwargs)
        for name in ("cgroup.subtree_control", "cgroup.procs", "memory.max", "memory.swap.max", "pids.max", "cpu.max"):
            (self / name).touch()

    monkeypatch.setattr(type(tmp_path), "mkdir", mkdir)
    group = cgroups.Cgroup(cgroups.Limits(memory_bytes=256 << 20, cpus=0.5), root=tmp_path, name="s1")
    folder = tmp_path / "orharbor" / "s1"
    assert group.folders == [folder]
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert [(folder / n).read_text() for n in ("memory.max", "memory.swap.max", "pids.max", "cpu.max")] == [
        str(256 << 20),
        str(256 << 20),
        "2048",
        "50000 100000",
    ]
    group.join(4242)
    assert (folder / "cgroup.procs").read_text() == "4242"
