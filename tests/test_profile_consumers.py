"""Tinker and Prime grade `export --for tinker` / `--for prime` tasks with their own code, in their own venvs.

tests/consumers/drive_tinker.py (tinker-cookbook 0.6.1's HarborReward) and drive_prime.py (verifiers
0.4.0's parse_task, HarborTask.finalize and solved; in separate mode also its restore and
stage_verifier in a fresh verifier box) run with the python of .venv-consumers/NAME, which
scripts/test.sh builds (scripts/consumers.sh, versions pinned in scripts/consumers/NAME.txt). Each
drives one scripted episode on orharbor's bubblewrap environment: the reference answer must read
1.0, the naive answer 0.0 and no answer -1.0, at levels 1 and 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orharbor.exporter import ExportOptions, export_row

from consumer_drivers import drive, drive_each

#: consumer -> the version its pin list installs (the driver reports what it imported)
VERSIONS = {"tinker": "0.6.1", "prime": "0.4.0"}
#: scripted policy -> the reward the task gives it
REWARDS = {"oracle": 1.0, "naive": 0.0, "nop": -1.0}
#: export -> its options
EXPORTS = {
    "tinker": ExportOptions(consumer="tinker", verifier_mode="shared"),
    "prime-shared": ExportOptions(consumer="prime", verifier_mode="shared", image_prefix="localhost/orharbor"),
    "prime-separate": ExportOptions(consumer="prime", image_prefix="localhost/orharbor"),
    "default": ExportOptions(),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory, shipped_rows) -> dict[tuple[str, int], Path]:
    """(export, level) -> the jobshop 4x4 task of that level, exported with EXPORTS[export]."""
    rows = {
        level: next(r for r in shipped_rows if (r["problem"], r["level"], r["size"]) == ("jobshop", level, "4x4"))
        for level in (1, 2)
    }
    return {
        (name, level): export_row(row, tmp_path_factory.mktemp(name), options)
        for name, options in EXPORTS.items()
        for level, row in rows.items()
    }


@pytest.mark.consumers
@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize(
    "consumer, export", [("tinker", "tinker"), ("prime", "prime-shared"), ("prime", "prime-separate")]
)
def test_consumer_reads_the_task_reward(exports, consumer, export, level):
    """Each policy an episode of its own; Prime's driver plays the three in one run (importing verifiers takes 8 s)."""
    task = exports[(export, level)]
    episodes = (
        drive_each(consumer, task, sorted(REWARDS))
        if consumer == "prime"
        else {policy: drive(consumer, task, policy) for policy in sorted(REWARDS)}
    )
    for policy, got in episodes.items():
        _reads_the_reward(got, consumer, export, policy)


def _reads_the_reward(got: dict, consumer: str, export: str, policy: str) -> None:
    assert got["consumer"] == consumer and got["version"] == VERSIONS[consumer], got
    assert got["reward"] == REWARDS[policy], got
    if consumer == "prime":
        assert got["mode"] == export.removeprefix("prime-"), got


@pytest.mark.consumers
@pytest.mark.slow
@pytest.mark.sandbox
def test_prime_fails_the_rollout_when_its_hook_does_not_run_as_root(exports):
    """verifiers runs hooks as the runtime's default user; not root, orharbor's hook fails and so does the rollout."""
    got = drive("prime", exports[("prime-shared", 1)], "oracle", "--runtime-user", "agent")
    assert "reward" not in got and got["rollout_failed"].startswith("collect hook failed"), got


@pytest.mark.consumers
@pytest.mark.slow
def test_prime_refuses_the_default_export(exports):
    """What --for prime is for: verifiers 0.4.0 refuses the default export's `user = "root"` hook."""
    got = drive("prime", exports[("default", 1)], "oracle")
    assert "collect hook `user` is not supported" in got["refused"], got
