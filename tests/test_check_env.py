"""orharbor check --env: which Harbor environment the trials run on (by name, by import path, or by default)."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import check
from orharbor.check import environment, trials
from orharbor.check.environment import BUBBLEWRAP, UnknownEnvironment, environment_class, resolve_environment
from orharbor.cli import main
from orharbor.harbor_env import BubblewrapEnvironment


class FakeDaemon:
    """A unix socket in tmp that answers HTTP like a Docker daemon: ``GET /_ping`` -> ``status``, OK."""

    def __init__(self, path: Path, status: str = "200 OK"):
        self.path, self.status, self.requests = path, status, []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                request = conn.recv(4096)
                self.requests.append(request.split(b"\r\n", 1)[0].decode())
                status = self.status if request.startswith(b"GET /_ping ") else "404 Not Found"
                conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 2\r\nApi-Version: 1.41\r\n\r\nOK".encode())

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def daemon(tmp_path, monkeypatch):
    """A fake Docker daemon at DOCKER_HOST=unix://<tmp>/docker.sock."""
    fake = FakeDaemon(tmp_path / "docker.sock")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{fake.path}")
    yield fake
    fake.close()


@pytest.fixture
def no_daemon(tmp_path, monkeypatch):
    """DOCKER_HOST naming a socket nobody listens on."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'nothing.sock'}")


@pytest.fixture
def task(tmp_path, shipped_rows) -> Path:
    """One exported level-1 task (shared mode: one environment per trial)."""
    from orharbor.exporter import ExportOptions, export_row

    row = next(r for r in shipped_rows if r["level"] == 1)
    return export_row(row, tmp_path / "tasks", ExportOptions(verifier_mode="shared"))


# ------------------------------------------------------------------ the selection


@pytest.mark.parametrize(
    "value, expected",
    [
        ("docker", "docker"),
        ("podman", "podman"),
        ("Docker", "docker"),
        ("apple_container", "apple-container"),
        ("modal", "modal"),
    ],
)
def test_a_harbor_name_selects_that_environment_type(value, expected):
    env = resolve_environment(value)
    assert (env.type, env.import_path) == (expected, None)
    assert env.config_kwargs() == {"type": expected} and not issubclass(environment_class(env), BubblewrapEnvironment)
    from harbor.models.trial.config import EnvironmentConfig

    assert EnvironmentConfig(**env.config_kwargs()).type.value == expected  # Harbor takes it as is


def test_an_import_path_selects_that_class():
    env = resolve_environment(BUBBLEWRAP)
    assert (env.type, env.import_path) == (None, BUBBLEWRAP)
    assert env.config_kwargs() == {"import_path": BUBBLEWRAP} and environment_class(env) is BubblewrapEnvironment
    docker = resolve_environment("harbor.environments.docker.docker:DockerEnvironment")
    assert docker.import_path and not issubclass(environment_class(docker), BubblewrapEnvironment)


@pytest.mark.parametrize(
    "value, message",
    [
        ("dokcer", "unknown Harbor environment 'dokcer'"),
        ("nosuch.module:Env", "cannot load the environment class"),
        ("orharbor.errors:UserError", "must subclass BaseEnvironment"),
    ],
)
def test_an_unknown_environment_is_a_clear_error(value, message):
    with pytest.raises(UnknownEnvironment, match=message):
        resolve_environment(value)


def test_an_unknown_name_is_a_click_error_listing_the_valid_names(tmp_path):
    result = CliRunner().invoke(main, ["check", str(tmp_path), "--env", "dokcer"])
    assert result.exit_code == 2
    assert "Invalid value for '--env'" in result.output and "unknown Harbor environment 'dokcer'" in result.output
    for name in ("docker", "podman", "daytona", "modal"):
        assert name in result.output
    assert "module:Class" in result.output


def test_the_library_refuses_an_unknown_name_before_anything_runs(tmp_path):
    with pytest.raises(UnknownEnvironment, match="Harbor knows: .*docker"):
        check.check_tasks(tmp_path, env="dokcer")


# ------------------------------------------------------------------ the default


def test_the_default_is_docker_when_a_daemon_answers_ping(daemon):
    env = resolve_environment(None)
    assert env.type == "docker" and str(daemon.path) in env.why
    assert daemon.requests == ["GET /_ping HTTP/1.0"]


def test_the_default_is_bubblewrap_without_a_daemon(no_daemon):
    env = resolve_environment(None)
    assert env.import_path == BUBBLEWRAP and environment_class(env) is BubblewrapEnvironment
    assert "no Docker daemon" in env.why


def test_a_socket_that_does_not_answer_200_is_no_daemon(tmp_path, monkeypatch):
    fake = FakeDaemon(tmp_path / "sick.sock", status="500 Internal Server Error")
    try:
        assert not environment.docker_daemon_answers(f"unix://{fake.path}")
    finally:
        fake.close()
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # accepts, never answers: the timeout ends it
    silent.bind(str(tmp_path / "silent.sock"))
    silent.listen(1)
    try:
        assert not environment.docker_daemon_answers(f"unix://{tmp_path / 'silent.sock'}", timeout_s=0.2)
    finally:
        silent.close()
    assert not environment.docker_daemon_answers("ssh://user@host")


def test_the_default_socket_is_used_without_docker_host(monkeypatch):
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    assert environment.docker_host() == "unix:///var/run/docker.sock"


def test_the_cli_header_names_the_default_docker_and_bubblewrap_is_not_required(daemon, task, monkeypatch):
    """With a daemon answering, check runs on docker: Harbor's preflight runs, bubblewrap is never asked for."""

    def no_bwrap(cls, kwargs=None):
        raise AssertionError("require_bwrap called for docker")

    def preflight(env):
        raise environment.EnvironmentUnavailable(f"{env.name}: preflight reached")

    monkeypatch.setattr(BubblewrapEnvironment, "preflight", classmethod(no_bwrap))
    monkeypatch.setattr(trials, "preflight", preflight)
    result = CliRunner().invoke(main, ["check", str(task.parent)])
    assert result.output.splitlines()[0].startswith(
        "environment: docker (Harbor environment; a Docker daemon answers at unix://"
    )
    assert result.exit_code == 1 and "Error: docker: preflight reached" in result.output


def test_the_cli_header_names_the_bubblewrap_default(no_daemon, task, monkeypatch):
    from orharbor.harbor_env.sandbox import SandboxUnavailable
    from orharbor.harbor_env import environment as bubblewrap_environment

    def bwrap():
        raise SandboxUnavailable("bwrap reached")

    monkeypatch.setattr(bubblewrap_environment, "require_bwrap", bwrap)
    result = CliRunner().invoke(main, ["check", str(task.parent)])
    assert result.output.splitlines()[0] == (
        "environment: orharbor.harbor_env:BubblewrapEnvironment (environment "
        "class; no Docker daemon answers at "
        f"{environment.docker_host()})"
    )
    assert result.exit_code == 1 and "bwrap reached" in result.output


def test_the_bubblewrap_preflight_asks_for_slirp4netns(tmp_path, monkeypatch):
    """Harbor's preflight hook of the bubblewrap environment ends in one line saying what to install, and check
    shows that line as it is, before anything else."""
    from orharbor.harbor_env import environment as bubblewrap_environment
    from orharbor.harbor_env import network

    monkeypatch.setattr(bubblewrap_environment, "require_bwrap", lambda: "/usr/bin/bwrap")
    monkeypatch.setattr(network.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="apt-get install -y slirp4netns") as refused:
        BubblewrapEnvironment.preflight(kwargs={})
    assert isinstance(refused.value.__cause__, network.NetworkUnavailable)
    with pytest.raises(network.NetworkUnavailable, match="^a public sandbox network needs slirp4netns"):
        check.check_tasks(tmp_path, env=BUBBLEWRAP)


def test_trials_get_the_chosen_environment_and_harbor_decides_an_allowlist(tmp_path, shipped_rows, monkeypatch):
    """Every trial's EnvironmentConfig carries the chosen type; only bubblewrap refuses an allowlist export itself."""
    from harbor.trial.trial import Trial

    from orharbor.exporter import ExportOptions, export_row

    row = next(r for r in shipped_rows if r["level"] == 1)
    task = export_row(
        row, tmp_path / "tasks", ExportOptions(agent_network="allowlist", allowed_hosts=("api.anthropic.com",))
    )
    seen = []

    async def create(config, *args, **kwargs):
        seen.append(config)
        raise RuntimeError("no engine in this test")

    monkeypatch.setattr(Trial, "create", staticmethod(create))
    monkeypatch.setattr(trials, "preflight", lambda env: None)
    [result] = check.check_tasks(task, env="podman")
    assert {c.environment.type.value for c in seen} == {"podman"} and {c.environment.import_path for c in seen} == {
        None
    }
    assert {p.policy for p in result.policies} == {"oracle", "naive", "nothing"}
    assert all("no engine in this test" in p.error for p in result.policies)
    assert "bubblewrap" not in result.problem_text()


def test_check_tasks_keeps_its_positional_signature():
    """Old callers (root, jobs, attacks, only, jobs_dir, on_result) still work; env is keyword-only."""
    import inspect

    params = inspect.signature(check.check_tasks).parameters
    assert list(params)[:6] == ["root", "jobs", "attacks", "only", "jobs_dir", "on_result"]
    assert params["env"].kind is inspect.Parameter.KEYWORD_ONLY and params["env"].default is None


# ------------------------------------------------------------------ a real run


@pytest.mark.sandbox
def test_check_runs_with_the_bubblewrap_import_path(task, tmp_path):
    """`--env orharbor.harbor_env:BubblewrapEnvironment` runs the trials, and the job folder records it."""
    import json

    result = CliRunner().invoke(
        main, ["check", str(task.parent), "-j", "2", "--env", BUBBLEWRAP, "--jobs-dir", str(tmp_path / "jobs")]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (f"environment: {BUBBLEWRAP} (environment class; chosen with --env)")
    assert "1/1 tasks passed" in result.output
    [job] = (tmp_path / "jobs").glob("check-*")
    assert json.loads((job / "config.json").read_text())["environment"]["import_path"] == BUBBLEWRAP
    for trial in job.glob("*/config.json"):
        assert json.loads(trial.read_text())["environment"]["import_path"] == BUBBLEWRAP
    shutil.rmtree(job)


# ------------------------------------------------------------------ export --verifier-network (scripts/e2e-podman.sh)


def test_verifier_network_public_is_a_labelled_testing_only_export_option(tmp_path, shipped_rows):
    """Only for engines without Harbor's egress sidecar: the separate verifier keeps the network, with a warning."""
    import json
    import tomllib

    row = next(r for r in shipped_rows if r["level"] == 1)
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    runner = CliRunner()
    plain = runner.invoke(main, ["export", "--dataset", str(tmp_path / "rows.jsonl"), "--out", str(tmp_path / "a")])
    assert plain.exit_code == 0, plain.output
    config = tomllib.loads((tmp_path / "a" / row["id"] / "task.toml").read_text())
    assert config["verifier"]["environment"]["network_mode"] == "no-network" and "warning" not in plain.output
    public = runner.invoke(
        main,
        [
            "export",
            "--dataset",
            str(tmp_path / "rows.jsonl"),
            "--out",
            str(tmp_path / "b"),
            "--verifier-network",
            "public",
        ],
    )
    assert public.exit_code == 0, public.output
    config = tomllib.loads((tmp_path / "b" / row["id"] / "task.toml").read_text())
    assert config["verifier"]["environment"]["network_mode"] == "public"
    assert "warning: --verifier-network public" in public.output and "not a benchmark export" in public.output


def test_docker_without_the_compose_plugin_is_refused_before_any_trial(monkeypatch):
    """Harbor's docker preflight asks `docker info` only; check also asks for `docker compose` (v2)."""
    import subprocess

    from harbor.environments.docker.docker import DockerEnvironment

    monkeypatch.setattr(DockerEnvironment, "preflight", classmethod(lambda cls, kwargs=None: None))
    monkeypatch.setattr(
        subprocess,
        "run",
        lambda *a, **k: subprocess.CompletedProcess(a[0], 1, "", "docker: unknown command: docker compose"),
    )
    with pytest.raises(environment.EnvironmentUnavailable, match="Compose v2.*unknown command"):
        environment.preflight(resolve_environment("docker"))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a[0], 0, "v2.40.3", ""))
    environment.preflight(resolve_environment("docker"))
