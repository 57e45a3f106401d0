"""Exported tasks against Harbor itself: its Task loader, its linter, its agents' needs."""

from __future__ import annotations

import ast
import asyncio
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import harbor
import pytest
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.lint.models import DEFAULT_RULES, LintRule
from harbor.lint.task import lint_task
from harbor.models.task.config import NetworkMode, NetworkPolicy
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_task_verifier_mode
from harbor.models.trial.config import AgentConfig as TrialAgentConfig
from harbor.models.trial.config import EnvironmentConfig as TrialEnvironmentConfig
from harbor.models.trial.config import VerifierConfig as TrialVerifierConfig
from harbor.trial.network_policy import TrialNetworkPlan, resolve_trial_network_plan

from orharbor.image_facts import AGENT_APT_PACKAGES, AGENT_USER
from orharbor.verifiers import contract

from harbor_sync import harbor_sync

HARBOR_DIR = Path(harbor.__file__).parent


def task_dirs(folder: Path) -> list[Path]:
    return sorted(p.parent for p in folder.glob("*/task.toml"))


def modelling_dirs(specs: dict[str, Path], retail: dict[str, Path], mode: str) -> list[Path]:
    return task_dirs(specs[mode]) + task_dirs(retail[mode])


def test_shipped_dataset_covers_smoke_and_a_real_size_in_both_levels(shipped_rows):
    """The shipped rows hold the smoke size and one real size, at levels 1 and 2."""
    from orharbor import problem_modules

    for name in {row["problem"] for row in shipped_rows}:
        module = problem_modules.get(name)
        rows = [r for r in shipped_rows if r["problem"] == name]
        for level in (1, 2):
            sizes = {r["size"] for r in rows if r["level"] == level}
            assert module.SIZES[0] in sizes and len(sizes) >= 2, (name, level, sizes)


@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_every_task_loads_with_harbor(exported, mode):
    """Harbor's own Task(path) loads each task with the verifier mode and deliverable we meant."""
    dirs = task_dirs(exported[mode])
    assert dirs
    for path in dirs:
        task = Task(path)
        assert task.config.verifier.environment_mode.value == mode
        level = task.config.metadata["level"]
        assert task.config.artifacts == ["/app/solution.json" if level == 1 else "/app/solve.py"]
        assert task.config.agent.user == AGENT_USER
        assert task.instruction.startswith("# ")


@pytest.mark.slow
def test_separate_tasks_pass_harbor_lint_with_zero_findings(exported):
    """`harbor lint` (default rules, and every rule) finds nothing in separate-mode tasks."""
    for path in task_dirs(exported["separate"]):
        assert lint_task(path, selected_rules=set(DEFAULT_RULES)) == []
        assert lint_task(path, selected_rules=set(LintRule)) == []
    harbor_cli = Path(sys.executable).parent / "harbor"
    cli = subprocess.run(
        [str(harbor_cli), "lint", *map(str, task_dirs(exported["separate"])), "--json"], capture_output=True, text=True
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == []


def test_shared_tasks_are_flagged_only_for_sharing_the_agent_sandbox(exported):
    """Shared mode is an option for old Harbor: lint's only default finding is shared-verifier."""
    for path in task_dirs(exported["shared"]):
        rules = {f.rule for f in lint_task(path, selected_rules=set(DEFAULT_RULES))}
        assert rules == {LintRule.SHARED_VERIFIER}


def _required_system_dependencies(agent_file: Path) -> set[str]:
    """The names an installed agent passes to ensure_system_dependencies, read from Harbor's source."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(agent_file.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "ensure_system_dependencies":
            for arg in node.args:
                if isinstance(arg, ast.Tuple):
                    names |= {elt.value for elt in arg.elts if isinstance(elt, ast.Constant)}
    return names


@pytest.mark.parametrize("agent", ["claude_code", "codex"])
def test_agent_image_has_what_harbors_installed_agents_install(exported, exported_specs, exported_retail, agent):
    """The agent Dockerfile apt-installs every Debian package claude-code and codex check for."""
    needed = _required_system_dependencies(HARBOR_DIR / "agents" / "installed" / f"{agent}.py")
    assert needed, "Harbor's agent source changed shape; update this test"
    packages = {p for name in needed for p in BaseInstalledAgent.SYSTEM_PACKAGES[name].packages["apt-get"]}
    for path in [*task_dirs(exported["separate"]), *modelling_dirs(exported_specs, exported_retail, "separate")]:
        dockerfile = (path / "environment" / "Dockerfile").read_text()
        match = re.search(r"apt-get install -y --no-install-recommends ([^\n\\&]+)", dockerfile)
        assert match, dockerfile
        assert packages <= set(match.group(1).split()) == set(AGENT_APT_PACKAGES)
        assert f"useradd --create-home --shell /bin/bash {AGENT_USER}" in dockerfile
        assert "WORKDIR /app" in dockerfile


def test_agent_image_holds_no_reference_verifier_or_hidden_instance(exported):
    """environment/ holds the Dockerfile and the visible instance(s) only; no reference values."""
    for path in task_dirs(exported["separate"]):
        files = {
            p.relative_to(path / "environment").as_posix() for p in (path / "environment").rglob("*") if p.is_file()
        }
        config = contract.load(str(path / "tests"))
        if config.KIND == "level1":
            assert files == {"Dockerfile", "instance.json"}
        else:
            assert "Dockerfile" in files and all(f.startswith("examples/") for f in files - {"Dockerfile"})
            hidden = {json.loads((path / "tests" / c.instance).read_text())["name"] for c in config.cases}
            visible = {json.loads((path / "environment" / f).read_text())["name"] for f in files - {"Dockerfile"}}
            assert not hidden & visible
        dockerfile = (path / "environment" / "Dockerfile").read_text()
        copied = re.findall(r"^COPY (\S+)", dockerfile, flags=re.M)
        assert copied and all(not c.startswith(("tests", "solution", "..")) for c in copied)
        secrets = [json.dumps(json.loads(f.read_text())) for f in (path / "solution").rglob("*.json")]
        for file in (path / "environment").rglob("*.json"):
            compact = json.dumps(json.loads(file.read_text()))
            assert not any(secret[1:-1] in compact for secret in secrets)


def test_task_toml_round_trips_through_harbors_config_model(exported):
    """task.toml parses with tomllib and Harbor's TaskConfig dumps the same settings back."""
    from harbor.models.task.config import TaskConfig

    for path in task_dirs(exported["separate"]):
        data = tomllib.loads((path / "task.toml").read_text())
        config = TaskConfig.model_validate(data)
        assert config.verifier.timeout_sec == data["verifier"]["timeout_sec"]
        assert config.environment.network_mode.value == "public"
        assert config.verifier.environment.network_mode.value == "no-network"
        assert config.verifier.network_mode is None and config.agent.network_mode is None
        assert config.verifier.environment.memory_mb == config.environment.memory_mb


def _network_plan(task: Task) -> TrialNetworkPlan:
    """The plan Harbor's Trial resolves for a task run with default trial settings."""
    return resolve_trial_network_plan(
        task.config,
        TrialAgentConfig(),
        TrialEnvironmentConfig(),
        TrialVerifierConfig(),
        None,
        verifier_mode=resolve_task_verifier_mode(task.config),
    )


def test_separate_verifier_starts_offline_and_never_switches(exported, exported_specs, exported_retail):
    """Harbor's plan: verifier env baseline no-network and equal to the verifier phase; agent public."""
    paths = [*task_dirs(exported["separate"]), *modelling_dirs(exported_specs, exported_retail, "separate")]
    for path in paths:
        plan = _network_plan(Task(path))
        assert plan.verifier_env_baseline == NetworkPolicy(network_mode=NetworkMode.NO_NETWORK)
        assert plan.verifier_phase == plan.verifier_env_baseline
        assert plan.agent_env_baseline == plan.agent_phase == NetworkPolicy(network_mode=NetworkMode.PUBLIC)


@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_allowlist_applies_to_the_agent_phase_and_setup_stays_public(shipped_rows, shipped_specs, tmp_path, mode):
    """--agent-network allowlist: setup (installing the agent) public, the agent phase on the allowlist."""
    from orharbor.exporter import ExportOptions, export_row
    from orharbor.exporter.modelling import export_spec

    options = ExportOptions(verifier_mode=mode, agent_network="allowlist", allowed_hosts=("api.anthropic.com",))
    for path in (export_row(shipped_rows[0], tmp_path, options), export_spec(shipped_specs[0], tmp_path, options)):
        plan = _network_plan(Task(path))
        assert plan.agent_env_baseline == NetworkPolicy(network_mode=NetworkMode.PUBLIC)
        assert plan.agent_phase == NetworkPolicy(
            network_mode=NetworkMode.ALLOWLIST, allowed_hosts=["api.anthropic.com"]
        )
        if mode == "separate":
            assert plan.verifier_phase == plan.verifier_env_baseline
            assert plan.verifier_env_baseline.network_mode == NetworkMode.NO_NETWORK


@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_modelling_tasks_load_with_harbor(exported_specs, exported_retail, mode):
    """Spec and RetailOpt tasks load with Task(path): their answer files are the artifacts."""
    dirs = modelling_dirs(exported_specs, exported_retail, mode)
    assert len(dirs) >= 16
    for path in dirs:
        task = Task(path)
        assert task.config.verifier.environment_mode.value == mode
        assert task.config.metadata["kind"] == "modelling"
        expected = json.loads((path / "tests" / "task.json").read_text())["deliverables"]
        assert task.config.artifacts == expected and task.config.agent.user == AGENT_USER
        assert task.instruction.startswith("# ")


def test_modelling_tasks_pass_harbor_lint(exported_specs, exported_retail):
    """Zero findings in separate mode (every rule); only shared-verifier in shared mode."""
    for path in modelling_dirs(exported_specs, exported_retail, "separate"):
        assert lint_task(path, selected_rules=set(LintRule)) == []
    for path in modelling_dirs(exported_specs, exported_retail, "shared"):
        assert {f.rule for f in lint_task(path, selected_rules=set(DEFAULT_RULES))} == {LintRule.SHARED_VERIFIER}


def test_modelling_agent_image_pins_the_modelling_stack(exported_specs, exported_retail):
    """ortools, pyomo, highspy, numpy and scipy, each pinned to one version; no grading file copied in."""
    for path in modelling_dirs(exported_specs, exported_retail, "separate"):
        dockerfile = (path / "environment" / "Dockerfile").read_text()
        pins = dict(re.findall(r"\b([a-z]+)==([0-9.]+)", dockerfile))
        assert set(pins) == {"ortools", "pyomo", "highspy", "numpy", "scipy"}
        assert re.findall(r"^COPY (\S+)", dockerfile, flags=re.M) in ([], ["files/"])


def _export(out: Path, *args: str) -> None:
    from click.testing import CliRunner

    from orharbor.cli import main

    result = CliRunner().invoke(main, ["export", "--out", str(out), *args])
    assert result.exit_code == 0, result.output


def test_registry_json_names_every_task_for_harbors_local_registry(tmp_path, monkeypatch):
    """DatasetConfig(orharbor@version, registry.json) resolves to exactly the tasks in --out, earlier exports too."""
    from harbor.models.job.config import DatasetConfig

    from orharbor.exporter.dataset_index import package_version

    out = tmp_path / "tasks"
    _export(out, "--problem", "jobshop")
    _export(out, "--problem", "cvrp")
    expected = set(task_dirs(out))
    assert {p.name.split("-")[0] for p in expected} == {"jobshop", "cvrp"}
    monkeypatch.chdir(tmp_path / "..")  # paths must not depend on where `harbor run` starts
    dataset = DatasetConfig(name="orharbor", version=package_version(), registry_path=out / "registry.json")
    configs = asyncio.run(dataset.get_task_configs())
    assert {config.get_local_path() for config in configs} == expected and len(configs) == len(expected)
    for config in configs:
        assert Task(config.get_local_path()).name == f"orharbor/{config.get_local_path().name}"
        assert config.source == "orharbor"


def test_harbor_run_accepts_the_dataset_by_name(tmp_path):
    """The JobConfig `harbor run -d orharbor@VERSION --registry-path` builds validates every task, runs nothing."""
    from inspect import signature

    from harbor.cli.config_validation import validate_local_sources
    from harbor.cli.jobs import build_job_config

    from orharbor.exporter.dataset_index import package_version

    out = tmp_path / "tasks"
    _export(out, "--problem", "rcpsp")
    options = signature(build_job_config).bind(
        dataset_name_version=f"orharbor@{package_version()}", registry_path=out / "registry.json"
    )
    options.apply_defaults()
    config = build_job_config(**options.arguments)
    assert [(d.name, d.version, d.registry_path) for d in config.datasets] == [
        ("orharbor", package_version(), out / "registry.json")
    ]
    report = asyncio.run(validate_local_sources(config))
    assert report.errors == [] and report.n_trials == len(task_dirs(out))


def test_dataset_toml_pins_each_task_with_harbors_own_digest(tmp_path):
    """dataset.toml lists every task by its [task] name with the digest `harbor dataset init` computes."""
    from harbor.models.dataset.manifest import DatasetManifest
    from harbor.publisher.packager import Packager

    from orharbor.exporter.dataset_index import MANIFEST_DATASET_NAME, package_version

    out = tmp_path / "tasks"
    _export(out, "--problem", "wtardiness")
    manifest = DatasetManifest.from_toml_file(out / "dataset.toml")
    assert (manifest.dataset.name, manifest.dataset.version) == (MANIFEST_DATASET_NAME, package_version())
    assert {(t.name, t.digest) for t in manifest.tasks} == {
        (Task(path).config.task.name, f"sha256:{Packager.compute_content_hash(path)[0]}") for path in task_dirs(out)
    }


@pytest.mark.slow
def test_harbor_sync_finds_every_digest_of_the_export_current(tmp_path):
    """`harbor sync` leaves the exported dataset.toml byte for byte as it is; after a task file changes it
    updates that task's digest (so the first sync would have caught a stale one)."""
    out = tmp_path / "tasks"
    _export(out, "--problem", "wtardiness")
    written = (out / "dataset.toml").read_bytes()
    assert "Updated 0 digest(s) in dataset.toml." in harbor_sync(out)
    assert (out / "dataset.toml").read_bytes() == written
    task = task_dirs(out)[0]
    (task / "instruction.md").write_text((task / "instruction.md").read_text() + "\n")
    assert "Updated 1 digest(s) in dataset.toml." in harbor_sync(out)
    assert (out / "dataset.toml").read_bytes() != written


def test_gitattributes_beside_the_tasks_leaves_them_unchanged_for_harbor(tmp_path):
    """.gitattributes sits at the root of --out, outside every task, whose lint stays clean."""
    out = tmp_path / "tasks"
    _export(out, "--problem", "timetabling")
    lines = (out / ".gitattributes").read_text().splitlines()
    assert {"*.sh text eol=lf", "Dockerfile text eol=lf"} <= set(lines)
    for path in task_dirs(out):
        assert not list(path.rglob(".gitattributes"))
        assert lint_task(path, selected_rules=set(LintRule)) == []
