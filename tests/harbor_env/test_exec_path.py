"""The exec path: nothing of a command on a host command line, output through pipes, a timeout that ends it.

The attacks (issue 33): the spec, environment included, was an argument of a host
``python3``, so any host user read an agent's API key from ``/proc/PID/cmdline``; a
command's stdout and stderr were host files, so a process left in the background that
kept fd 1 took host disk at will (``fallocate``); and a timeout killed only the host
side, so a collect hook went on running as root inside the sandbox. Each defence is
removed in :mod:`legacy_entry` (the entry as it was), where the same attack wins.
"""

from __future__ import annotations

import asyncio
import secrets
import select
from pathlib import Path

import pytest

from legacy_entry import LegacyEntry
from sandboxes import environment, run, running

from orharbor.harbor_env import BubblewrapEnvironment
from orharbor.harbor_env.environment import OUTPUT_LIMIT


def fresh_secret() -> str:
    """An API key no other process holds: the search covers every host process, and beside this test may run
    its own mutation (which puts its key on a command line on purpose) or another suite's."""
    return "sk-orharbor-test-" + secrets.token_hex(12)


def _host_command_lines() -> list[str]:
    """Every host process's command line (what any host user may read)."""
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return lines


def _secret_on_a_command_line(tmp_path, cls) -> bool:
    secret = fresh_secret()

    async def body():
        async with running(environment(tmp_path, cls=cls)) as (env,):
            command = asyncio.create_task(env.exec("sleep 3", user="root", env={"API_KEY": secret}))
            seen = False
            while not command.done():
                seen = seen or any(secret in line for line in _host_command_lines())
                await asyncio.sleep(0.05)
            assert (await command).return_code == 0
            return seen

    return run(body())


@pytest.mark.sandbox
def test_a_commands_environment_is_on_no_host_command_line(tmp_path):
    """The spec goes through the door's socket: no host process's argv holds the API key while it runs."""
    assert not _secret_on_a_command_line(tmp_path, BubblewrapEnvironment)


@pytest.mark.sandbox
def test_with_the_spec_on_the_command_line_any_host_user_reads_the_key(tmp_path):
    """Mutation: the old entry's host python carried the spec in argv, for the whole command."""
    assert _secret_on_a_command_line(tmp_path, LegacyEntry)


@pytest.mark.sandbox
def test_no_sandbox_process_reads_a_root_commands_environment(tmp_path):
    """An agent process scanning /proc through 20 root commands never sees the key, in argv or environ."""
    secret = fresh_secret()
    scan = (
        "python3 -c '\nimport os, sys, time\nend = time.time() + 60\nwhile time.time() < end and "
        'not os.path.exists("/tmp/stop"):\n    for pid in os.listdir("/proc"):\n'
        '        for name in ("cmdline", "environ"):\n            try:\n'
        '                data = open(f"/proc/{pid}/{name}", "rb").read()\n            except OSError:\n'
        "                continue\n            if sys.argv[1][::-1].encode() in data:\n"
        '                print("seen in", name)\n                sys.exit(0)\nprint("never seen")\n\' ' + secret[::-1]
    )  # reversed: the scanner's own command line must not hold the key

    async def body():
        async with running(environment(tmp_path)) as (env,):
            watcher = asyncio.create_task(env.exec(scan, user="agent"))
            await asyncio.sleep(1)
            for _ in range(20):
                assert (await env.exec("true", user="root", env={"API_KEY": secret})).return_code == 0
            await env.exec("touch /tmp/stop", user="root")
            return await watcher

    watcher = run(body())
    assert watcher.stdout.strip() == "never seen", watcher


#: A process left in the background keeps the command's stdout and, once the command has ended, tries to
#: make it 64 MiB long; its verdict (0, or fallocate's errno) lands in /tmp/verdict.
GROW = (
    '(sleep 1; exec python3 -c \'import os\ntry:\n    os.posix_fallocate(1, 0, 64 << 20)\n    v = "0"\n'
    'except OSError as exc:\n    v = str(exc.errno)\nopen("/tmp/verdict", "w").write(v)\') & echo started'
)


def _grow(tmp_path, cls) -> str:
    async def body():
        async with running(environment(tmp_path, cls=cls)) as (env,):
            started = await env.exec(GROW, user="agent")
            assert started.stdout.strip() == "started", started
            for _ in range(600):
                verdict = await env.exec("cat /tmp/verdict 2>/dev/null", user="agent")
                if verdict.stdout.strip():
                    return verdict.stdout.strip()
                await asyncio.sleep(0.1)
            raise AssertionError("the background process never gave its verdict")

    return run(body())


@pytest.mark.sandbox
def test_a_background_process_cannot_grow_a_commands_stdout_into_host_disk(tmp_path):
    """stdout is a pipe the host drains: fallocate on it fails."""
    assert _grow(tmp_path, BubblewrapEnvironment) != "0"


@pytest.mark.sandbox
def test_with_stdout_in_a_host_file_the_background_process_takes_host_disk(tmp_path):
    """Mutation: the old entry's stdout was a host file, and fallocate gave it 64 MiB of the host's disk."""
    assert _grow(tmp_path, LegacyEntry) == "0"


@pytest.mark.sandbox
def test_output_past_the_limit_is_read_and_dropped(tmp_path):
    """A command writing more than the limit ends normally; the first OUTPUT_LIMIT bytes come back."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            return await env.exec(f"head -c {OUTPUT_LIMIT + 5_000_000} /dev/zero | tr '\\0' a; echo done >&2")

    result = run(body())
    assert result.return_code == 0 and result.stderr == "done\n"
    assert result.stdout == "a" * OUTPUT_LIMIT


@pytest.mark.sandbox
@pytest.mark.parametrize("into", ["text", "file"])
def test_what_a_command_wrote_before_its_status_is_read_all_comes_back(tmp_path, into):
    """The command ends and replies before the exec looks (a busy host): its output is still all there.

    The exec asks for the status once, and asyncio's sock_recv answers at once when the reply is already in:
    the loop never ran the pipe's reader in between (seen: an empty archive, with -n 3 beside another worker).
    """

    async def body():
        async with running(environment(tmp_path)) as (env,):
            submit = env._door.submit

            def reply_before_anything_reads(*args):
                reply = submit(*args)
                select.select([reply], [], [], 600)  # the command has ended and its status is in
                return reply

            env._door.submit = reply_before_anything_reads
            sink = tmp_path / "out" if into == "file" else None
            result = await env._run(
                ["sh", "-c", "head -c 50000 /dev/zero | tr '\\0' a"],
                cwd="/",
                env=None,
                timeout_sec=600,
                user="root",
                stdout=sink,
            )
            return result.return_code, (sink.read_text() if sink else result.stdout)

    assert run(body()) == (0, "a" * 50_000)


def _left_after(tmp_path, cls, time_out, sleeps: str) -> str:
    """What is left of the ``sleeps`` (a pgrep pattern) once ``time_out(env)`` has let a root command time out."""

    async def body():
        async with running(environment(tmp_path, cls=cls)) as (env,):
            await time_out(env)
            return (await env.exec(f"pgrep -a -f '{sleeps}' || true", user="root")).stdout

    return run(body())


def _after_a_timeout(tmp_path, cls) -> str:
    """What is left of a timed-out root command (a hook with a child of its own), once the exec has raised."""

    async def time_out(env):
        with pytest.raises(RuntimeError, match="timed out"):
            await env.exec("sleep 301 & sleep 302; wait", user="root", timeout_sec=1)

    return _left_after(tmp_path, cls, time_out, "sleep 30[12]")


@pytest.mark.sandbox
def test_a_timed_out_command_ends_inside_the_sandbox(tmp_path):
    """The door kills the command's process group: neither sleep is left."""
    assert _after_a_timeout(tmp_path, BubblewrapEnvironment).strip() == ""


@pytest.mark.sandbox
def test_killing_only_the_host_side_leaves_the_command_running_as_root(tmp_path):
    """Mutation: the old entry killed its host python only, and both sleeps went on."""
    left = _after_a_timeout(tmp_path, LegacyEntry)
    assert "sleep 301" in left and "sleep 302" in left, left


@pytest.mark.sandbox
def test_commands_running_at_once_each_get_their_own_output_and_status(tmp_path):
    """The door serves many commands at once: each answer goes back to the exec that asked for it."""

    async def body():
        async with running(environment(tmp_path)) as (env,):
            return await asyncio.gather(
                *(
                    env.exec(f"echo {i}; sleep 0.{i % 5}; echo e{i} >&2; exit {i}", user="agent" if i % 2 else "root")
                    for i in range(20)
                )
            )

    results = run(body())
    assert [(r.stdout, r.stderr, r.return_code) for r in results] == [(f"{i}\n", f"e{i}\n", i) for i in range(20)]


def _after_a_hook_timeout(tmp_path, cls) -> str:
    """A collect hook past its timeout, run by Harbor's own Trial._run_collect_hooks: what is left of it."""
    import logging
    from types import SimpleNamespace

    from harbor.models.task.config import VerifierCollectConfig
    from harbor.trial.trial import Trial

    async def time_out(env):
        trial = SimpleNamespace(logger=logging.getLogger("collect-hook-test"), agent_environment=env)
        hook = VerifierCollectConfig(command="sleep 303 & sleep 304; wait", timeout_sec=1, user="root")
        await Trial._run_collect_hooks(trial, [hook])  # best effort: the timeout is logged, not raised

    return _left_after(tmp_path, cls, time_out, "sleep 30[34]")


@pytest.mark.sandbox
def test_a_collect_hook_past_its_timeout_ends_inside_the_sandbox(tmp_path):
    """The suspect: past the hook's timeout, only the host side was killed and the hook went on as root."""
    assert _after_a_hook_timeout(tmp_path, BubblewrapEnvironment).strip() == ""


@pytest.mark.sandbox
def test_with_the_old_entry_the_timed_out_collect_hook_runs_on_as_root(tmp_path):
    left = _after_a_hook_timeout(tmp_path, LegacyEntry)
    assert "sleep 303" in left and "sleep 304" in left, left
