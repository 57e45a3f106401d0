"""orharbor check: every policy an agent in Harbor's own trial code, on the bubblewrap environment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from harbor.models.job.result import JobResult

from orharbor import check
from orharbor.cli import main
from orharbor.exporter.task_dir import write_manifest


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["separate", "shared"])
@pytest.mark.sandbox
def test_every_shipped_task_is_solvable_by_its_reference(exported, mode, tmp_path):
    """Oracle 1.0, naive 0.0, no answer -1.0 on every shipped task, read from Harbor's trial and job results."""
    seen = []
    results = check.check_tasks(exported[mode], jobs=2, jobs_dir=tmp_path, on_result=seen.append)
    assert len(results) == len(list(exported[mode].glob("*/task.toml")))
    assert sorted(r.task for r in seen) == sorted(r.task for r in results)
    failures = [f"{r.task}: {r.problem_text()}" for r in results if not r.ok]
    assert not failures, failures
    for r in results:
        rewards = {p.policy: p.reward for p in r.policies}
        assert rewards == {"oracle": 1.0, "naive": 0.0, "nothing": -1.0}
        assert r.mode == mode
    [job] = tmp_path.glob("check-*")
    result = JobResult.model_validate_json((job / "result.json").read_text())
    means = {key.split("__")[0]: stats.metrics[0]["mean"] for key, stats in result.stats.evals.items()}
    assert means == {"oracle": 1.0, "orharbor-naive": 0.0, "nop": -1.0}
    assert result.n_total_trials == 3 * len(results) and not any(s.n_errors for s in result.stats.evals.values())
    trial = job / f"{results[0].task}__oracle"
    assert json.loads((trial / "verifier" / "reward.json").read_text()) == {"reward": 1.0}


def _copy_task(exported, name_part: str, tmp_path: Path) -> Path:
    source = next(p.parent for p in sorted(exported["separate"].glob("*/task.toml")) if name_part in p.parent.name)
    target = tmp_path / "tasks" / source.name
    shutil.copytree(source, target)
    return target


def _edit_task_json(task: Path, **changes) -> None:
    path = task / "tests" / "task.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))
    write_manifest(task / "tests")  # else the verifier refuses the edited tests/ as tampered


@pytest.mark.sandbox
def test_check_fails_when_the_oracle_does_not_reach_the_reference(exported, tmp_path):
    """A task whose stored reference is better than its oracle fails, naming the oracle policy."""
    task = _copy_task(exported, "-l1-", tmp_path)
    reference = json.loads((task / "tests" / "task.json").read_text())["reference"]
    _edit_task_json(task, reference=reference - 1)
    [result] = check.check_tasks(task, jobs=2)
    assert not result.ok
    assert "oracle scored" in result.problem_text() and "expected 1" in result.problem_text()


@pytest.mark.sandbox
def test_a_naive_answer_that_does_not_score_zero_fails(exported, tmp_path):
    """A corrupted row (reference 1,000,000, above naive) gives naive +1.0: check fails on it."""
    task = _copy_task(exported, "-l1-", tmp_path)
    _edit_task_json(task, reference=1_000_000)
    [result] = check.check_tasks(task, jobs=2, only=("naive",))
    [naive] = result.policies
    assert naive.reward == 1.0 and not result.ok
    assert "naive scored 1.0 (expected 0)" in result.problem_text()


@pytest.mark.sandbox
def test_check_fails_when_the_verifier_writes_no_reward(exported, tmp_path):
    """A test.sh that never writes reward.json is reported with Harbor's own exception."""
    task = _copy_task(exported, "-l2-", tmp_path)
    (task / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n")
    [result] = check.check_tasks(task, jobs=2, only=("oracle",))
    assert not result.ok and "RewardFileNotFoundError" in result.problem_text()


@pytest.mark.sandbox
def test_a_reward_file_with_more_than_one_key_fails(exported, tmp_path):
    """Harbor's mean and pass@k need one key: a reward.json with two is a failure, whatever its reward."""
    task = _copy_task(exported, "-l1-", tmp_path)
    test_sh = task / "tests" / "test.sh"
    test_sh.write_text(
        test_sh.read_text().replace(
            "exit 0", 'printf \'{"reward": 1.0, "feasible": 1}\' > /logs/verifier/reward.json\nexit 0'
        )
    )
    [result] = check.check_tasks(task, jobs=1, only=("oracle",))
    assert not result.ok and "not the one key 'reward'" in result.problem_text()


@pytest.mark.sandbox
def test_check_cli_prints_each_task_and_exits_nonzero_on_failure(exported, tmp_path):
    """`orharbor check` prints a line per task, keeps the job folder on request, and exits 1 naming a failure."""
    good = _copy_task(exported, "-l1-", tmp_path)
    runner = CliRunner()
    ok = runner.invoke(main, ["check", str(good.parent), "-j", "2", "--jobs-dir", str(tmp_path / "jobs")])
    assert ok.exit_code == 0, ok.output
    assert "1/1 tasks passed" in ok.output and "Harbor job folder:" in ok.output
    [line] = [line for line in ok.output.splitlines() if line.startswith(good.name)]
    assert line.split()[3:6] == ["+1.000", "+0.000", "-1.000"] and " ok " in line
    assert len(list((tmp_path / "jobs").glob("check-*/*/result.json"))) == 3
    (good / "solution" / "solve.sh").write_text("#!/bin/bash\nexit 3\n")
    bad = runner.invoke(main, ["check", str(good.parent), "-j", "2"])
    assert bad.exit_code == 1
    assert f"FAILED {good.name}" in bad.output and "solution/solve.sh exited 3" in bad.output


def test_missing_bubblewrap_is_a_clear_error(monkeypatch, tmp_path):
    """Without bwrap, check says how to install it instead of crashing."""
    from orharbor.harbor_env import sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(check.SandboxUnavailable, match="apt-get install -y bubblewrap"):
        check.check_tasks(tmp_path)
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 1 and "bubblewrap" in result.output


@pytest.mark.sandbox
def test_an_empty_folder_has_no_tasks_to_check(tmp_path):
    """Pointing check at a folder without tasks is an error, not a silent pass."""
    with pytest.raises(check.SandboxUnavailable, match="no task directories"):
        check.check_tasks(tmp_path)


@pytest.mark.sandbox
def test_a_crashing_verifier_still_leaves_reward_minus_one(exported, tmp_path):
    """If Python itself fails, test.sh writes reward -1.0 rather than nothing, and check flags the crash."""
    task = _copy_task(exported, "-l1-", tmp_path)
    (task / "tests" / "verify.py").write_text("raise SystemExit(7)\n")
    [result] = check.check_tasks(task, jobs=1, only=("oracle",))
    [oracle] = result.policies
    assert oracle.reward == -1.0 and oracle.verifier_crashed and not result.ok


@pytest.mark.sandbox
def test_solve_py_can_use_numpy_scipy_and_processes_under_the_limits(exported, tmp_path):
    """A level-2 solve.py that imports numpy and scipy, runs a process pool and writes temp files is scored.

    The lockdown closes /tmp and every shared folder but /dev/shm: multiprocessing's
    semaphores and tempfile (TMPDIR is the run's scratch) must still work. Each run gets 60 s
    instead of the task's 10: importing numpy and scipy and starting a pool take seconds on a
    loaded machine, and what is checked here is that they work, not how fast.
    """
    task = _copy_task(exported, "-l2-", tmp_path)
    run = json.loads((task / "tests" / "task.json").read_text())["run"]
    run["limits"]["solve_time_limit_s"] = 60.0
    _edit_task_json(task, run=run)
    naive = task / "solution" / "naive" / "solve.py"
    naive.write_text(
        "import multiprocessing, tempfile\n"
        "import numpy, scipy.optimize, scipy.sparse\n"
        "assert numpy.linalg.norm(numpy.ones(4)) == 2.0\n"
        "assert abs(scipy.optimize.minimize_scalar(lambda x: (x - 3) ** 2).x - 3) < 1e-6\n"
        "def _square(x):\n    return x * x\n"
        "if __name__ == '__main__':\n"
        "    with multiprocessing.Pool(2) as pool:\n"
        "        assert pool.map(_square, range(4)) == [0, 1, 4, 9]\n"
        "    with tempfile.NamedTemporaryFile() as scratch:\n"
        "        scratch.write(b'x')\n" + naive.read_text()
    )
    [result] = check.check_tasks(task, jobs=1, only=("naive",))
    [policy] = result.policies
    assert (policy.reward, policy.error, policy.verifier_crashed) == (0.0, None, False)


@pytest.mark.sandbox
def test_an_allowlist_export_is_refused_with_what_to_check_instead(tmp_path, shipped_rows):
    """The sandbox cannot enforce the agent's allowlist: check says so and names the export to check."""
    from orharbor.exporter import ExportOptions, export_row

    row = next(r for r in shipped_rows if r["level"] == 1)
    task = export_row(row, tmp_path, ExportOptions(agent_network="allowlist", allowed_hosts=("api.anthropic.com",)))
    [result] = check.check_tasks(task)
    assert not result.ok and not result.policies
    assert "--agent-network public" in result.problem_text()


def test_first_error_names_the_hidden_reason_and_the_public_examples_stderr():
    """check's one-line reason: a hidden row's fixed reason, and the program's words only from the example run."""
    from orharbor.check.results import first_error

    details = {
        "instances": [{"index": 0, "error": "timed out after 2 s"}],
        "example": {"error": "timed out after 2 s", "stderr_tail": "Traceback: boom"},
    }
    assert first_error(details) == "instance 0: timed out after 2 s Traceback: boom"
    details["example"] = {"error": None, "stderr_tail": "fine run's chatter"}
    assert first_error(details) == "instance 0: timed out after 2 s"
