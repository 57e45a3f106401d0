"""orharbor check on a Harbor provider it has never heard of: all it knows of one comes from the class.

The provider below is defined here and nowhere else, and named to check by import path, as
``check --env module:Class`` takes it. Nothing in orharbor names it: check calls its preflight
(Harbor's hook) and its ``preflight_tasks``, reads its capabilities, and hands its trials to
Harbor like any other provider's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

from orharbor import check
from orharbor.check.environment import EnvironmentUnavailable
from orharbor.cli import main
from orharbor.errors import UserError

#: ``check --env`` names the provider by this.
FAKE = f"{__name__}:FakeCloudEnvironment"
OFFLINE_ONLY = EnvironmentCapabilities(disable_internet=True)
EVERYTHING = EnvironmentCapabilities(
    disable_internet=True, network_allowlist=True, network_allowlist_hostnames=True, dynamic_network_policy=True
)


class FakeCloudEnvironment(BaseEnvironment):
    """A provider: its preflight refuses with ``refusal`` (if set), its capabilities are ``offered``."""

    refusal: BaseException | None = None
    offered: EnvironmentCapabilities = OFFLINE_ONLY
    calls: list = []  # what check asked the class, in order
    trials: list = []  # the TrialConfig of each trial Harbor was asked to create

    @staticmethod
    def type() -> str:
        return "fakecloud"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return self.offered

    @classmethod
    def preflight(cls, kwargs=None) -> None:
        super().preflight(kwargs)
        cls.calls.append(("preflight", kwargs))
        if cls.refusal is not None:
            raise cls.refusal

    @classmethod
    def preflight_tasks(cls, task_dirs: list[Path]) -> None:
        cls.calls.append(("preflight_tasks", [path.name for path in task_dirs]))

    def _validate_definition(self) -> None:
        pass

    async def start(self, force_build: bool) -> None:
        raise RuntimeError("fakecloud starts nothing")

    async def stop(self, delete: bool) -> None:
        pass

    async def upload_file(self, source_path, target_path) -> None:
        pass

    async def upload_dir(self, source_dir, target_dir) -> None:
        pass

    async def download_file(self, source_path, target_path) -> None:
        pass

    async def download_dir(self, source_dir, target_dir) -> None:
        pass

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None) -> ExecResult:
        return ExecResult(stdout="", stderr="", return_code=1)


@pytest.fixture
def fake(monkeypatch):
    """The provider's class with fresh state, and Harbor's Trial.create recording each trial's config."""
    from harbor.trial.trial import Trial

    monkeypatch.setattr(FakeCloudEnvironment, "calls", [])
    monkeypatch.setattr(FakeCloudEnvironment, "trials", [])

    async def create(config, *args, **kwargs):
        FakeCloudEnvironment.trials.append(config)
        raise RuntimeError("no trial runs in this test")

    monkeypatch.setattr(Trial, "create", staticmethod(create))
    return FakeCloudEnvironment


@pytest.fixture
def tasks(tmp_path, shipped_rows) -> dict[str, Path]:
    """Two level-1 rows exported into one folder, one with a public agent network, one with an agent allowlist."""
    from orharbor.exporter import ExportOptions, export_row

    public, allowlist = [r for r in shipped_rows if r["level"] == 1][:2]
    return {
        "public": export_row(public, tmp_path / "tasks", ExportOptions()),
        "allowlist": export_row(
            allowlist,
            tmp_path / "tasks",
            ExportOptions(agent_network="allowlist", allowed_hosts=("api.anthropic.com",)),
        ),
    }


@pytest.mark.parametrize(
    "refusal, shown",
    [
        (
            SystemExit("fakecloud needs FAKECLOUD_TOKEN in the environment"),
            f"Error: {FAKE}: fakecloud needs FAKECLOUD_TOKEN in the environment",
        ),
        (
            UserError("fakecloud needs FAKECLOUD_TOKEN in the environment"),  # raised as SystemExit from it, below
            "Error: fakecloud needs FAKECLOUD_TOKEN in the environment",
        ),
    ],
    ids=["exit", "exit-from-user-error"],
)
def test_its_preflight_runs_first_and_its_refusal_is_one_line(fake, tasks, monkeypatch, refusal, shown):
    """Harbor's preflight of the class runs before anything else; its SystemExit reaches the user as one line."""
    if isinstance(refusal, UserError):
        exit_ = SystemExit(str(refusal))
        exit_.__cause__ = refusal
        refusal = exit_
    monkeypatch.setattr(fake, "refusal", refusal)
    result = CliRunner().invoke(main, ["check", str(tasks["public"]), "--env", FAKE])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == f"environment: {FAKE} (environment class; chosen with --env)"
    assert [line for line in result.output.splitlines() if line.startswith("Error:")] == [shown]
    assert "Traceback" not in result.output
    assert fake.calls == [("preflight", {})] and fake.trials == []
    with pytest.raises(UserError, match="FAKECLOUD_TOKEN"):
        check.check_tasks(tasks["public"], env=FAKE)


def test_a_plain_exit_is_an_environment_unavailable_naming_it(fake, tasks, monkeypatch):
    monkeypatch.setattr(fake, "refusal", SystemExit("fakecloud is down"))
    with pytest.raises(EnvironmentUnavailable, match=f"^{FAKE}: fakecloud is down$"):
        check.check_tasks(tasks["public"], env=FAKE)


def test_without_dynamic_networks_an_allowlist_export_is_refused_before_its_trials(fake, tasks, tmp_path):
    """Its capabilities say it cannot switch networks after start: check refuses the allowlist export itself, as
    it does on the bubblewrap environment, and runs the public export's trials through Harbor with the class."""
    results = {r.task: r for r in check.check_tasks(tasks["public"].parent, env=FAKE, jobs_dir=tmp_path / "jobs")}
    # its preflight, then its preflight of both tasks, once, before any trial
    assert fake.calls == [("preflight", {}), ("preflight_tasks", sorted(t.name for t in tasks.values()))]
    public, allowlist = results[tasks["public"].name], results[tasks["allowlist"].name]
    assert (
        not allowlist.policies
        and "which the fakecloud environment cannot enforce (it cannot switch networks "
        "after start, and Harbor refuses the trial)"
        in allowlist.problem_text()
    )
    assert "--agent-network public" in allowlist.problem_text()
    assert {p.policy for p in public.policies} == {"oracle", "naive", "nothing"}
    assert {c.environment.import_path for c in fake.trials} == {FAKE}
    assert {c.task.path.name for c in fake.trials} == {tasks["public"].name}
    [job] = (tmp_path / "jobs").glob("check-*")
    assert json.loads((job / "config.json").read_text())["environment"]["import_path"] == FAKE


def test_with_dynamic_networks_and_an_allowlist_harbor_decides(fake, tasks, monkeypatch):
    """Its capabilities say it can: the allowlist export's trials go to Harbor like the public one's."""
    monkeypatch.setattr(fake, "offered", EVERYTHING)
    results = check.check_tasks(tasks["public"].parent, env=FAKE)
    assert all({p.policy for p in r.policies} == {"oracle", "naive", "nothing"} for r in results)
    assert {c.task.path.name for c in fake.trials} == {t.name for t in tasks.values()}
    assert all("no trial runs in this test" in p.error for r in results for p in r.policies)
