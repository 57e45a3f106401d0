"""RL trainers accept an orharbor export: each consumer's own loader and reward code, in its own venv.

The episodes run tests/consumers/drive_NAME.py with the python of .venv-consumers/NAME, which
scripts/test.sh builds (scripts/consumers.sh, versions pinned in scripts/consumers/NAME.txt).
One small level-1 task (jobshop 4x4, seed 0) is exported in both verifier modes; Harbor's reward
scale for it is 1.0 at the reference and -1.0 for no answer, and the consumer must read the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orharbor.consumers import ENVIRONMENT, serve_as
from orharbor.datasets.rows import shipped_datasets

from consumer_drivers import consumer_python, drive, drive_each

REPO = Path(__file__).resolve().parents[1]
TASK = "jobshop-4x4-l1-s0"
#: consumer -> the version its pin list installs (the driver reports what it imported)
CONSUMERS = {"trl": "1.16.0", "openenv": "0.10.0"}
#: scripted policy -> the reward the task gives it (reference answer, no answer)
REWARDS = {"oracle": 1.0, "nop": -1.0}


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    """One level-1 task exported by `orharbor export` in each verifier mode, as ROOT/tasks/."""
    rows = tmp_path_factory.mktemp("rows") / "row.jsonl"
    source = next(p for p in shipped_datasets() if p.name == "jobshop.jsonl")
    line = next(l for l in source.read_text().splitlines() if json.loads(l)["id"] == TASK)
    rows.write_text(line + "\n")
    roots = {}
    for mode in ("separate", "shared"):
        root = tmp_path_factory.mktemp(mode)
        subprocess.run(
            [
                Path(sys.executable).with_name("orharbor"),
                "export",
                "--dataset",
                str(rows),
                "--problem",
                "jobshop",
                "--verifier-mode",
                mode,
                "--out",
                str(root / "tasks"),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        assert (root / "tasks" / TASK / "task.toml").is_file()
        roots[mode] = root
    return roots


@pytest.mark.consumers
@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("mode", ["separate", "shared"])
@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_consumer_reads_the_task_reward(exports, name, mode):
    """The consumer loads the export, runs one episode per policy on orharbor's bubblewrap environment, and reads
    the task's reward: 1.0 for the reference answer, -1.0 for none (not its 0.0 for 'nothing ran').
    (One driver run plays both policies: importing the consumer takes seconds.)"""
    episodes = drive_each(name, exports[mode], sorted(REWARDS))
    for policy, got in episodes.items():
        assert got["consumer"] == name and got["version"] == CONSUMERS[name] and got["task"] == TASK
        assert got["reward"] == REWARDS[policy], got
        if name == "openenv":
            assert got["reward_key"] == "reward", got  # the key OpenEnv took its scalar from
        if name == "trl":
            # TRL scores in the agent's own sandbox in both modes: no separate verifier, no collect hook
            assert got["verifier_in_agent_sandbox"] is True, got


@pytest.mark.consumers
@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_openenv_keeps_every_shipped_task(exported, exported_specs, mode):
    """OpenEnv's loader, with Harbor's task validation on, keeps every shipped task (algorithm rows and
    modelling specs) of an export in either verifier mode, and finds no symlink in any."""
    roots = (exported[mode], exported_specs[mode])
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    done = subprocess.run(
        [consumer_python("openenv"), REPO / "tests" / "consumers" / "drive_openenv.py", "discover", *map(str, roots)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    kept = [json.loads(line) for line in done.stdout.strip().splitlines()[-len(roots) :]]
    for root, names in zip(roots, kept):
        assert names and names == sorted(p.parent.name for p in root.glob("*/task.toml")), root


@pytest.mark.consumers
def test_trl_reads_zero_when_nothing_ran(exports):
    """TRL's documented default: an environment that never started an episode scores 0.0, not the task's
    -1.0 for no answer (so a failed start looks like a middling answer to TRL, not like the worst one)."""
    got = drive("trl", exports["shared"], "unstarted")
    assert got["task"] == TASK and got["reward"] == 0.0, got


@pytest.fixture
def harbor_registry(monkeypatch):
    """Harbor's environment-type registry, restored after the test (serve_as changes it process-wide)."""
    from harbor.environments import factory

    monkeypatch.setattr(factory, "_ENVIRONMENT_REGISTRY", dict(factory._ENVIRONMENT_REGISTRY))
    return factory


@pytest.mark.consumers
def test_serve_as_routes_a_type_name_to_bubblewrap(harbor_registry):
    """After serve_as('docker'), Harbor's factory resolves the type 'docker' to BubblewrapEnvironment,
    and other types are left alone."""
    from harbor.models.environment_type import EnvironmentType

    from orharbor.harbor_env import BubblewrapEnvironment

    factory = harbor_registry.EnvironmentFactory
    before_e2b = harbor_registry._ENVIRONMENT_REGISTRY[EnvironmentType.E2B]
    assert factory.get_environment_class(EnvironmentType.DOCKER) is not BubblewrapEnvironment
    serve_as("docker")
    assert factory.get_environment_class(EnvironmentType.DOCKER) is BubblewrapEnvironment
    assert harbor_registry._ENVIRONMENT_REGISTRY[EnvironmentType.E2B] == before_e2b
    assert ENVIRONMENT == "orharbor.harbor_env:BubblewrapEnvironment"


@pytest.mark.consumers
def test_serve_as_refuses_what_it_cannot_route(harbor_registry, monkeypatch):
    """An unknown type name, and a Harbor without the registry serve_as relies on, are refused."""
    with pytest.raises(ValueError, match="not a Harbor environment type"):
        serve_as("bubblewrap")
    monkeypatch.delattr(harbor_registry, "_ENVIRONMENT_REGISTRY")
    with pytest.raises(RuntimeError, match="no type registry"):
        serve_as("docker")
