"""The bubblewrap Harbor environment: a container stand-in faithful where the verifier and attacks depend on it.

Most tests start one sandbox from a real exported task's Dockerfile, as Harbor's
trial would, and look at it from inside with ``exec``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from harbor.models.task.config import NetworkMode, NetworkPolicy
from harbor.models.task.task import Task
from harbor.models.trial.paths import TrialPaths

from orharbor.exporter.task_dir import write_manifest
from orharbor.harbor_env import BubblewrapEnvironment
from orharbor.harbor_env.image import Copy, DockerfileError, Run, read_dockerfile

from bundled import edit_bundled
from waiting import wait_until_async

#: A thread group whose main thread left with a raw exit(2) while another thread runs: it shows as a zombie.
HIDDEN_THREAD = (
    "import ctypes, threading, time\n"
    "threading.Thread(target=time.sleep, args=(1003,)).start()\n"
    "ctypes.CDLL(None).syscall(60, 0)\n"
)


def _task(exported, mode: str, level: int = 1) -> Path:
    return next(p.parent for p in sorted(exported[mode].glob(f"jobshop-*-l{level}-*/task.toml")))


def _env(directory: Path, config, tmp_path: Path, network: NetworkMode = NetworkMode.PUBLIC) -> BubblewrapEnvironment:
    paths = TrialPaths(tmp_path / "trial")
    paths.mkdir()
    logs = [
        {"type": "bind", "source": str(source), "target": target}
        for source, target in (
            (paths.agent_dir, "/logs/agent"),
            (paths.verifier_dir, "/logs/verifier"),
            (paths.artifacts_dir, "/logs/artifacts"),
        )
    ]  # as Harbor's Trial passes them
    return BubblewrapEnvironment(
        environment_dir=directory,
        environment_name="t",
        session_id="t__env",
        trial_paths=paths,
        task_env_config=config,
        auto_mounts=logs,
        network_policy=NetworkPolicy(network_mode=network),
    )


def _agent_env(task: Path, tmp_path: Path) -> BubblewrapEnvironment:
    return _env(task / "environment", Task(task).config.environment, tmp_path)


def _verifier_env(task: Path, tmp_path: Path) -> BubblewrapEnvironment:
    config = Task(task).config.verifier.environment
    return _env(task / "tests", config, tmp_path, NetworkMode.NO_NETWORK)


def _in(env: BubblewrapEnvironment, body):
    """Start ``env``, run ``await body(env)``, always stop it."""

    async def main():
        await env.start(force_build=False)
        try:
            return await body(env)
        finally:
            await env.stop(delete=True)

    return asyncio.run(main())


async def _processes(env) -> list[str]:
    result = await env.exec("ps -eo pid=,ppid=,user=,args=", user="root")
    return [" ".join(line.split()) for line in (result.stdout or "").splitlines()]


#: ``ps -eo pid=,ppid=,user=,args=`` read from /proc by the image's python3: the verifier image, like
#: python:3.12-slim, has no procps.
PROC_PS = r"""python3 - <<'EOF'
import os, pwd
for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
    try:
        ppid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
        uid = next(int(line.split()[2]) for line in open(f"/proc/{pid}/status") if line.startswith("Uid:"))
        args = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode().strip()
    except (OSError, StopIteration):
        continue
    print(pid, ppid, pwd.getpwuid(uid).pw_name, args)
EOF"""


async def _proc_processes(env) -> list[str]:
    result = await env.exec(PROC_PS, user="root")
    assert result.return_code == 0, result.stderr
    return [" ".join(line.split()) for line in (result.stdout or "").splitlines()]


async def _read(env, path: str) -> str:
    result = await env.exec(f"cat {path}", user="root")
    assert result.return_code == 0, result.stderr
    return result.stdout or ""


@pytest.mark.sandbox
def test_pid_1_is_the_keepalive_shell_with_sleep_as_its_child(exported, tmp_path):
    """As in Harbor's Docker compose under dash: PID 1 is `sh -c "sleep infinity"`, the sleep its child."""

    async def body(env):
        return await _processes(env)

    lines = _in(_agent_env(_task(exported, "separate"), tmp_path), body)
    assert "1 0 root sh -c sleep infinity" in lines
    assert any(line.endswith(" 1 root sleep infinity") for line in lines), lines


@pytest.mark.sandbox
def test_killing_the_keepalive_sleep_ends_the_sandbox_like_a_container(exported, tmp_path):
    """Killing the sleep ends PID 1 and every process in the sandbox; later execs fail."""

    async def body(env):
        await env.exec("setsid sleep 1000 >/dev/null 2>&1 &", user="agent")
        await env.exec("pkill -KILL -x -P 1 sleep", user="root")
        await wait_until_async(lambda: not env.is_alive, "the sandbox's end", timeout=60)
        return env.is_alive, await env.exec("true", user="root")

    alive, after = _in(_agent_env(_task(exported, "separate"), tmp_path), body)
    assert not alive
    assert after.return_code != 0 and "not running" in (after.stderr or "")


def _oracle_answer(task: Path) -> bytes:
    return (task / "solution" / "solution.json").read_bytes()


@pytest.mark.parametrize("mode", ["separate", "shared"])
@pytest.mark.sandbox
def test_test_sh_leaves_the_sandbox_alive_with_its_reward(exported, tmp_path, mode):
    """The blocker: test.sh, run as Harbor runs it, writes reward.json and the keepalive still runs after."""
    task = _task(exported, mode)
    answer = tmp_path / "solution.json"
    answer.write_bytes(_oracle_answer(task))

    async def body(env):
        if mode == "shared":
            await env.upload_file(answer, "/tmp/answer.json")
            await env.exec("cp /tmp/answer.json /app/solution.json", user="agent")
            await env.upload_dir(task / "tests", "/tests")
        else:
            await env.upload_file(answer, "/app/solution.json")  # Harbor's artifact upload
        result = await env.exec("bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1", user="root")
        await asyncio.sleep(0.2)
        return result, env.is_alive, await _read(env, "/logs/verifier/reward.json"), await _proc_processes(env)

    env = _verifier_env(task, tmp_path) if mode == "separate" else _agent_env(task, tmp_path)
    result, alive, reward, processes = _in(env, body)
    assert result.return_code == 0
    assert alive, processes
    assert json.loads(reward) == {"reward": 1.0}
    assert "1 0 root sh -c sleep infinity" in processes


@pytest.mark.sandbox
def test_a_root_daemon_and_the_keepalive_survive_the_verifier_and_agent_processes_do_not(exported, tmp_path):
    """Shared mode: the verifier ends the agent's processes, hidden threads included, and never root's."""
    task = _task(exported, "shared")
    answer = tmp_path / "solution.json"
    answer.write_bytes(_oracle_answer(task))
    program = tmp_path / "hidden.py"
    program.write_text(HIDDEN_THREAD)

    async def body(env):
        async def agent_processes_started() -> bool:
            lines = await _processes(env)
            return any("agent sleep 1002" in line for line in lines) and any(
                "agent [python3] <defunct>" in line or "agent python3 /tmp/hidden.py" in line for line in lines
            )

        async def agent_processes_ended() -> bool:
            lines = await _processes(env)
            threads = await env.exec("ps -eLo user=,args= | grep -c '^agent' || true", user="root")
            return not any(" agent " in f" {line} " for line in lines) and threads.stdout.strip() == "0"

        await env.exec("setsid sleep 1001 >/dev/null 2>&1 &", user="root")
        await env.upload_file(program, "/tmp/hidden.py")
        await env.exec(
            "setsid sleep 1002 >/dev/null 2>&1 & setsid python3 /tmp/hidden.py >/dev/null 2>&1 &", user="agent"
        )
        await wait_until_async(agent_processes_started, "the agent's processes starting")
        await env.upload_file(answer, "/tmp/answer.json")
        await env.exec("cp /tmp/answer.json /app/solution.json", user="agent")
        before = await _processes(env)
        await env.upload_dir(task / "tests", "/tests")
        await env.exec("bash /tests/test.sh >/dev/null 2>&1", user="root")
        await wait_until_async(agent_processes_ended, "the agent's processes ending")  # SIGKILL takes effect
        threads = await env.exec("ps -eLo user=,args= | grep -c '^agent' || true", user="root")
        return before, await _processes(env), env.is_alive, await _read(env, "/logs/verifier/details.json"), threads

    before, after, alive, details, threads = _in(_agent_env(task, tmp_path), body)
    assert any("agent sleep 1002" in line for line in before)
    assert any("agent [python3] <defunct>" in line or "agent python3 /tmp/hidden.py" in line for line in before)
    assert alive
    assert any("root sleep 1001" in line for line in after), after
    assert "1 0 root sh -c sleep infinity" in after
    assert not any(" agent " in f" {line} " for line in after), after
    assert threads.stdout.strip() == "0"
    assert json.loads(details)["foreign_processes_ended"] >= 2


@pytest.mark.sandbox
def test_the_old_cleanup_rule_kills_the_keepalive_and_loses_the_reward(exported, tmp_path):
    """Mutation: ending every process but PID 1 (the old rule) stops the sandbox mid-verify, as on Docker."""
    task = tmp_path / "task"
    shutil.copytree(_task(exported, "separate"), task)
    edit_bundled(
        task / "tests",
        "orharbor/verifiers/processes.py",
        "non_root_processes().items()",
        "{int(p): 0 for p in os.listdir('/proc') if p.isdigit() and p != '1'}.items()",
    )
    write_manifest(task / "tests")  # the edited verifier is the task's own now, not a plant
    answer = tmp_path / "solution.json"
    answer.write_bytes(_oracle_answer(task))

    async def body(env):
        await env.upload_file(answer, "/app/solution.json")
        await env.exec("bash /tests/test.sh", user="root")
        await wait_until_async(lambda: not env.is_alive, "the sandbox's end", timeout=60)
        return env.is_alive, await env.exec("cat /logs/verifier/reward.json", user="root")

    alive, reward = _in(_verifier_env(task, tmp_path), body)
    assert not alive and reward.return_code != 0


@pytest.mark.sandbox
def test_exec_runs_as_named_users_with_their_home(exported, tmp_path):
    """root, agent and nobody resolve through the image's /etc/passwd; root keeps Docker's capabilities only."""

    async def body(env):
        out = {}
        for user in ("root", "agent", "nobody", None):
            result = await env.exec('echo "$(id -un) $(id -u) $HOME $PWD"', user=user)
            out[user] = (result.stdout or "").strip()
        mount = await env.exec("mount -t tmpfs none /mnt", user="root")
        return out, mount

    out, mount = _in(_agent_env(_task(exported, "separate"), tmp_path), body)
    assert out["root"] == "root 0 /root /app"
    assert out["agent"] == "agent 1000 /home/agent /app"
    assert out["nobody"].startswith("nobody 65534 ")
    assert out[None] == out["root"]
    assert mount.return_code != 0  # no CAP_SYS_ADMIN, as in a Docker container


@pytest.mark.sandbox
def test_background_processes_outlive_their_exec_and_exec_does_not_wait_for_them(exported, tmp_path):
    """One sandbox per phase: a process one exec leaves behind is there at the next; exec returns at once."""

    async def body(env):
        first = await env.exec("sleep 1000 & echo started", user="agent", timeout_sec=120)  # far below the 1000 s
        second = await env.exec("pgrep -u agent -x sleep", user="root")
        with pytest.raises(RuntimeError, match="timed out after 1 seconds"):
            await env.exec("sleep 30", user="agent", timeout_sec=1)
        return first, second

    first, second = _in(_agent_env(_task(exported, "separate"), tmp_path), body)
    assert first.return_code == 0 and first.stdout.strip() == "started"
    assert second.return_code == 0 and second.stdout.strip()


@pytest.mark.sandbox
def test_no_network_is_a_fresh_network_namespace(exported, tmp_path):
    """The offline verifier sees only a loopback interface; the public agent sandbox its own slirp4netns tap0 too."""
    task = _task(exported, "separate")

    async def interfaces(env):
        result = await env.exec("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", user="root")
        return set((result.stdout or "").split())

    assert _in(_verifier_env(task, tmp_path / "v"), interfaces) == {"lo"}
    assert _in(_agent_env(task, tmp_path / "a"), interfaces) - {"lo"}


def test_dockerfile_plan_mirrors_provisioning_and_keeps_the_rest(tmp_path):
    """pip and venv lines become mirrored venvs, useradd a user; COPY, WORKDIR, ENV and RUN are kept in order."""
    (tmp_path / "data").mkdir()
    (tmp_path / "Dockerfile").write_text(
        "# comment\nFROM python:3.12-slim\nENV A=1 PATH=/opt/v/bin:$PATH\n"
        "RUN apt-get update \\\n && apt-get install -y curl \\\n && rm -rf /var/lib/apt/lists/*\n"
        "RUN python3 -m venv /opt/v && /opt/v/bin/pip install --no-cache-dir numpy==2.2.6 scipy\n"
        "RUN pip install --no-cache-dir ortools==9.15\nRUN useradd --create-home --shell /bin/bash agent\n"
        "WORKDIR /app\nCOPY data/ /app/data/\nRUN chown -R agent:agent /app\n"
    )
    plan = read_dockerfile(tmp_path / "Dockerfile")
    assert plan.venvs == {"/opt/v": ("numpy", "scipy")}
    assert plan.local_packages == ("ortools",)
    assert plan.apt_packages == ("curl",)
    assert plan.users == ["agent"]
    assert plan.env["A"] == "1" and plan.env["PATH"].startswith("/opt/v/bin:/usr/local/bin:")
    assert plan.workdir == "/app"
    assert plan.steps == [
        Run("mkdir -p /app", "/"),
        Copy((tmp_path / "data").resolve(), "/app/data/"),
        Run("chown -R agent:agent /app", "/app"),
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("VOLUME /data", "does not support VOLUME"),
        ("COPY a b c", "one source and one target"),
        ("COPY ../outside /x", "not in the build context"),
    ],
)
def test_dockerfile_instructions_the_sandbox_cannot_stand_in_for_are_refused(tmp_path, line, message):
    """An unsupported instruction is an error naming the file and line, not a silently different image."""
    (tmp_path / "Dockerfile").write_text(f"FROM python:3.12-slim\n{line}\n")
    with pytest.raises(DockerfileError, match=rf"Dockerfile:2: .*{message}"):
        read_dockerfile(tmp_path / "Dockerfile")
