"""Entering a sandbox: privileges dropped before anything of the sandbox runs, never a recycled pid.

The attacks: commands used to enter with ``nsenter --target PID ... -- env ... setpriv``,
so the sandbox's own ``env`` (found through its ``PATH``, which root in the sandbox can
fill) ran with the host root's full capabilities before ``setpriv`` dropped them; and a
sandbox was found by its process id, which the kernel hands out again once it exits.
"""

from __future__ import annotations

import ctypes
import os
import subprocess

import pytest

from sandboxes import environment, run, running
from waiting import wait_until

#: Fakes root in the sandbox plants where a privileged entry would look for its helpers.
PLANT = (
    "for tool in env setpriv nsenter bash sh; do printf '#!/bin/sh\\necho %s $(grep CapEff /proc/self/status) "
    '>> /tmp/planted-ran\\nexec /usr/bin/%s "$@"\\n\' $tool $tool > /usr/local/bin/$tool; '
    "chmod 755 /usr/local/bin/$tool; done"
)


@pytest.mark.sandbox
def test_programs_planted_on_the_sandboxs_path_never_run_while_entering(tmp_path):
    """root plants env/setpriv/bash in /usr/local/bin: the next command runs, and with Docker's capabilities only."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            await env.exec(PLANT, user="root")
            await env.exec("rm -f /tmp/planted-ran", user="root")
            caps = await env.exec("grep CapEff /proc/self/status", user="root")
            agent = await env.exec("id -u", user="agent")
            ran = await env.exec("cat /tmp/planted-ran", user="root")
            return caps, agent, ran

    caps, agent, ran = run(body())
    assert caps.stdout.strip().endswith("00000000a80425fb")
    assert agent.stdout.strip() == "1000"
    # only the planted bash ran, as the command itself (bash -c is looked up on the sandbox's PATH, as docker
    # exec does), and only after the privileges were dropped: it saw Docker's capabilities, not the host's
    assert set(ran.stdout.splitlines()) == {"bash CapEff: 00000000a80425fb"}, ran.stdout


@pytest.mark.sandbox
def test_the_old_entry_ran_the_planted_env_with_every_capability(tmp_path):
    """Mutation: entering as before (nsenter, then the sandbox's env and setpriv) hands the plant full powers."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            await env.exec(PLANT, user="root")
            pid = _sandbox_pid(env)
            old = subprocess.run(
                ["nsenter", "--target", str(pid), "--user", "--mount", "--pid", "--root", "--", "env", "-i", "true"],
                capture_output=True,
                text=True,
                env={"PATH": "/usr/local/bin:/usr/bin:/bin"},
            )
            ran = await env.exec("cat /tmp/planted-ran", user="root")
            return old, ran

    old, ran = run(body())
    assert old.returncode == 0, old.stderr
    assert "env CapEff: 000001ffffffffff" in ran.stdout.splitlines()  # every capability (cap_last_cap 40)


def _sandbox_pid(env) -> int:
    """The host pid of the sandbox's PID 1 (only the old entry needs it), as the kernel names it for our pidfd."""
    with open(f"/proc/self/fdinfo/{env._pidfd}") as info:
        fields = dict(line.split(":", 1) for line in info.read().splitlines() if ":" in line)
    return int(fields["Pid"])


@pytest.mark.sandbox
def test_an_exited_sandbox_is_never_entered_through_a_recycled_pid(tmp_path):
    """Once PID 1 exits, exec says the sandbox is gone, even when its pid now belongs to a host process."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            pid = _sandbox_pid(env)
            await env.exec("pkill -KILL -x -P 1 sleep", user="root")
            wait_until(lambda: not env.is_alive, "the sandbox's end", timeout=60)
            squatter = _spawn_at(pid)
            try:
                result = await env.exec("cat /etc/hostname", user="root")
                old = (
                    subprocess.run(
                        ["nsenter", "--target", str(pid), "--mount", "--root", "--", "cat", "/etc/hostname"],
                        capture_output=True,
                        text=True,
                    )
                    if squatter
                    else None
                )
            finally:
                if squatter:
                    squatter.kill()
                    squatter.wait()
            return result, old

    result, old = run(body())
    assert result.return_code == 125 and "not running" in result.stderr
    if old is not None:  # the pid was recycled: the old way entered the host
        assert old.stdout == open("/etc/hostname").read()


def _spawn_at(pid: int) -> subprocess.Popen | None:
    """A host process with process id ``pid`` (the kernel's next pid is set just below it), or None."""
    for _ in range(20):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        process = subprocess.Popen(["sleep", "600"])  # killed by the caller; outlives any slow exec before that
        if process.pid == pid:
            return process
        process.kill()
        process.wait()
    return None


@pytest.mark.sandbox
def test_each_command_gets_a_fresh_session_keyring_not_the_hosts(tmp_path, monkeypatch):
    """Without any seccomp filter in the way, a command's session keyring is still not this process's."""
    from orharbor.harbor_env import environment as environment_module

    import pyseccomp
    import tempfile

    def allow_all() -> bytes:
        with tempfile.TemporaryFile() as out:
            pyseccomp.SyscallFilter(pyseccomp.ALLOW).export_bpf(out)
            out.seek(0)
            return out.read()

    monkeypatch.setattr(environment_module, "compile_bpf", allow_all)
    libc = ctypes.CDLL(None, use_errno=True)
    ours = libc.syscall(250, 0, -3, 1)  # KEYCTL_GET_KEYRING_ID of the session keyring, created if needed
    probe = "python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(250, 0, -3, 1))'"

    async def body():
        async with running(environment(tmp_path)) as (env,):
            return await env.exec(probe, user="root"), await env.exec(probe, user="root")

    first, second = run(body())
    assert ours > 0 and int(first.stdout) > 0
    assert len({ours, int(first.stdout), int(second.stdout)}) == 3


def _enter_now(env, argv: list[str]) -> str:
    """``argv``'s stdout, entered as the sandbox's root through a door opened right away, without waiting."""
    from orharbor.harbor_env.enter import Door, Target

    door = Door(env._namespaces, env._seccomp)
    read, write = os.pipe()
    try:
        with open(os.devnull, "rb") as null:
            reply = door.submit(Target(0, 0, "/", {"PATH": "/usr/bin:/bin"}), argv, null.fileno(), write, write)
        os.close(write)
        with reply:
            reply.recv(4096)
        with os.fdopen(read, "r") as out:
            return out.read()
    finally:
        door.close()


@pytest.mark.sandbox
def test_a_command_entered_before_pid1_has_exec_d_runs_on_the_hosts_root(tmp_path, monkeypatch):
    """Mutation for the start race: entered while bubblewrap still builds the root, a command sees host files.

    That is where an image step's ``chown agent:agent`` failed with "invalid group"
    under load (it read the host's /etc/group), and where it could have changed host
    files as root. The environment waits until PID 1 has exec'd; entering earlier
    (here: from bubblewrap's own start hook, while its child is held) lands on the host.
    """
    from orharbor.harbor_env import launch

    marker = tmp_path / "host-only-marker"
    marker.write_text("the host's file\n")
    seen: dict[str, str] = {}
    start = launch.start_bwrap

    def start_and_enter_early(*args, before_release=None, **kwargs):
        def early(pid: int) -> None:
            before_release(pid)
            seen["early"] = _enter_now(env, ["cat", str(marker)])

        return start(*args, before_release=early, **kwargs)

    env = environment(tmp_path)
    monkeypatch.setattr(launch, "start_bwrap", start_and_enter_early)

    async def body():
        async with running(env):
            return await env.exec(f"cat {marker}", user="root")

    ready = run(body())
    assert seen["early"] == "the host's file\n", seen["early"]
    assert ready.return_code != 0 and "the host's file" not in (ready.stdout or ""), ready
