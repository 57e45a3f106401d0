"""RetailOpt tasks grade the answer a run of the agent's model.py writes, never a typed answer.json.

The verifier copies /app/model.py into a fresh private folder with the scenario's data
(tests/data.json) as data.json, runs ``python3 -I model.py data.json answer.json`` there under
the task's limits and grades what that run wrote. Here the runs use this interpreter (which
has the modelling stack) as this user; the isolated path (lockdown, a uid per run, the task's
own /usr/local/bin/python3) is what test_retailopt's check test drives in the bubblewrap
environment.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from orharbor.check.attacks import attack_policies
from orharbor.exporter.modelling import RETAIL_RUN_LIMIT_S, RETAIL_TIME_LIMIT_S, export_retail
from orharbor.exporter.task_dir import write_manifest
from orharbor.harbor_env.image import read_dockerfile
from orharbor.image_facts import MODELLING_PACKAGES
from orharbor.report.jobs import read_jobs
from orharbor.report.tables import modelling_rows
from orharbor.verifiers import contract
from orharbor.verifiers.main import verify, write_result
from orharbor.verifiers.solver_run import Limits

from bundled import edit_bundled
from quick_retail import QUICK_RETAIL
from jobfolders import write_trial

#: The run limit the grading tests give model.py instead of the task's 60 s: what they check is how a run
#: is graded, not how fast this machine starts Python and OR-Tools, so a busy CPU must not turn a run
#: into a time-out. The task's own limit is checked where it is written (task.json, task.toml).
ROOMY_S = 600.0


def _task(exported_retail, mode: str = "separate", scenario: str = QUICK_RETAIL[0], suffix: str = "") -> Path:
    return exported_retail[mode] / f"retailopt-{scenario.replace('_', '-')}{suffix}"


def _verify(task: Path, model: Path, tmp_path: Path, tests: Path | None = None) -> tuple[float, dict]:
    """Grade ``model`` as the task's verifier does, with the run limit of ``tests`` (default: ROOMY_S)."""
    tests = tests or _with_limit(task, tmp_path, ROOMY_S)
    return verify(str(tests), str(model), workroot=str(tmp_path), python=sys.executable, drop_privileges=False)


def _app(tmp_path: Path, files: dict[str, str]) -> Path:
    """A stand-in for /app holding ``files``."""
    app = tmp_path / "app"
    app.mkdir(exist_ok=True)
    for name, text in files.items():
        (app / name).write_text(text)
    return app


def _right(task: Path) -> str:
    expected = contract.load(str(task / "tests")).expected
    return json.dumps({"status": expected["status"], "objective": expected["objective"]})


def _with_limit(task: Path, tmp_path: Path, wall_s: float) -> Path:
    """A copy of the task's tests/ (a fresh one under ``tmp_path``) whose run limit is ``wall_s``."""
    tests = Path(tempfile.mkdtemp(dir=tmp_path, prefix="copy-")) / "tests"
    shutil.copytree(task / "tests", tests)
    config = json.loads((tests / "task.json").read_text())
    config["run"]["limits"]["solve_time_limit_s"] = wall_s
    (tests / "task.json").write_text(json.dumps(config))
    return tests


@pytest.mark.parametrize("suffix", ["", "-schema"])
@pytest.mark.slow
def test_the_oracle_model_scores_one_when_the_verifier_reruns_it(exported_retail, tmp_path, suffix):
    for scenario in QUICK_RETAIL:
        task = _task(exported_retail, scenario=scenario, suffix=suffix)
        reward, details = _verify(task, task / "solution" / "model.py", tmp_path)
        assert (reward, details["executed"], details["correct"]) == (1.0, 1, 1), details
        assert details["returncode"] == 0 and details["timed_out"] is False
        assert details["status"] == "OPTIMAL" and details["time_limit_s"] == ROOMY_S  # solved, not cut off


def test_a_typed_answer_without_a_model_scores_zero(exported_retail, tmp_path):
    """The blind guess: the right answer in /app/answer.json is never read."""
    task = _task(exported_retail)
    app = _app(tmp_path, {"answer.json": _right(task)})
    reward, details = _verify(task, app / "model.py", tmp_path)
    assert (reward, details["executed"], details["correct"]) == (0.0, 0, 0)
    assert "model.py does not exist" in details["error"]


def test_a_typed_answer_beside_a_model_that_writes_nothing_scores_zero(exported_retail, tmp_path):
    task = _task(exported_retail)
    app = _app(tmp_path, {"answer.json": _right(task), "model.py": "import sys\n"})
    reward, details = _verify(task, app / "model.py", tmp_path)
    assert (reward, details["executed"], details["correct"]) == (0.0, 0, 0)
    assert details["returncode"] == 0 and "wrote no answer.json" in details["error"]


def test_a_model_that_writes_the_wrong_objective_ran_but_scores_zero(exported_retail, tmp_path):
    """A silent failure: executed 1, correct 0."""
    task = _task(exported_retail)
    app = _app(
        tmp_path,
        {"model.py": "import json, sys\njson.dump({'status': 'OPTIMAL', 'objective': 1.5}, open(sys.argv[2], 'w'))\n"},
    )
    reward, details = _verify(task, app / "model.py", tmp_path)
    assert (reward, details["executed"], details["correct"]) == (0.0, 1, 0)
    assert details["objective"] == 1.5 and details["returncode"] == 0 and "not within" in details["error"]


def test_a_model_that_crashes_shows_its_traceback(exported_retail, tmp_path):
    task = _task(exported_retail)
    app = _app(tmp_path, {"model.py": "import json, sys\ndata = json.load(open(sys.argv[1]))\ndata['no such key']\n"})
    reward, details = _verify(task, app / "model.py", tmp_path)
    assert (reward, details["executed"], details["returncode"]) == (0.0, 0, 1)
    assert "KeyError: 'no such key'" in details["stderr_tail"]


def test_a_model_that_sleeps_past_the_limit_times_out(exported_retail, tmp_path):
    """It wrote the right answer first: an unfinished run is not graded."""
    task = _task(exported_retail)
    tests = _with_limit(task, tmp_path, 1.0)
    app = _app(
        tmp_path, {"model.py": f"import sys, time\nopen(sys.argv[2], 'w').write({_right(task)!r})\ntime.sleep(60)\n"}
    )
    reward, details = _verify(task, app / "model.py", tmp_path, tests)
    assert (reward, details["executed"], details["correct"]) == (0.0, 0, 0)
    assert details["timed_out"] is True and "within its 1 s" in details["error"]
    assert details["wall_s"] < 60  # stopped at its 1 s, not waited for through its own 60 s sleep (generous)


def test_the_model_runs_in_a_fresh_folder_with_only_itself_and_the_data(exported_retail, tmp_path):
    """The contract of the instruction: cwd holds model.py and data.json (the scenario's data), argv as stated."""
    task = _task(exported_retail, suffix="-schema")
    data = json.loads((task / "environment" / "files" / "data.json").read_text())
    probe = (
        f"import json, os, sys\n"
        f"ok = (sys.argv == ['model.py', 'data.json', 'answer.json'] and sys.flags.isolated\n"
        f"      and sorted(os.listdir('.')) == ['data.json', 'model.py']\n"
        f"      and json.load(open('data.json')) == {data!r})\n"
        f"open(sys.argv[2], 'w').write({_right(task)!r} if ok else '{{\"status\": \"ERROR\"}}')\n"
    )
    app = _app(tmp_path, {"model.py": probe, "answer.json": "left behind by the agent"})
    reward, details = _verify(task, app / "model.py", tmp_path)
    assert (reward, details["correct"]) == (1.0, 1), details


def test_execution_rate_counts_runs_that_finished_and_wrote_a_well_formed_answer(exported_retail, tmp_path):
    """metrics reads the verifier's details: oracle (ran, right), naive (ran, wrong), a typed guess (not run)."""
    task = _task(exported_retail)
    app = _app(tmp_path, {"answer.json": _right(task)})
    runs = {
        "oracle": task / "solution" / "model.py",
        "naive": task / "solution" / "naive" / "model.py",
        "guess": app / "model.py",
    }
    for name, model in runs.items():
        reward, details = _verify(task, model, tmp_path)
        trial = write_trial(
            tmp_path / "jobs" / "job",
            name,
            task.name,
            agent=name,
            model=None,
            reward=reward,
            task_dir=tmp_path / "gone",
        )
        write_result(str(trial / "verifier"), reward, details)  # the verifier's own details.json
    trials = read_jobs([tmp_path / "jobs"]).trials
    assert {t.agent: (t.executed, t.correct, t.family) for t in trials} == {
        "oracle": (True, True, "F1"),
        "naive": (True, False, "F1"),
        "guess": (False, False, "F1"),
    }
    [row] = modelling_rows([replace(t, agent="all") for t in trials], "family")
    assert (row["execution_rate"], row["accuracy"], row["silent_failure_rate"]) == (2 / 3, 1 / 3, 1 / 3)


def test_export_puts_the_data_in_tests_and_the_limit_in_task_json(exported_retail, retail_rows):
    row = next(r for r in retail_rows if r["scenario_id"] == QUICK_RETAIL[0])
    for mode in ("separate", "shared"):
        for suffix in ("", "-schema"):
            task = _task(exported_retail, mode, suffix=suffix)
            config = contract.load(str(task / "tests"))
            run = config.run
            assert json.loads((task / "tests" / "data.json").read_text()) == row["data"]
            assert (task / "tests" / "data.json").stat().st_mode & 0o777 == 0o600
            assert run.limits == Limits(solve_time_limit_s=60.0, memory_mb=2048) and run.data == "data.json"
            assert config.deliverables == ("/app/model.py",) and "answer" not in config.expected
            toml = (task / "task.toml").read_text()
            assert 'artifacts = [\n    "/app/model.py",\n]' in toml and "timeout_sec = 180.0" in toml
            assert "run_time_limit_s = 60.0" in toml
            assert (task / "solution" / "solve.sh").read_text().strip().endswith("cp /solution/model.py /app/model.py")
            assert "\nDEFAULT_TIME_LIMIT_S = 30.0\n" in (task / "solution" / "model.py").read_text()
            assert sorted(p.name for p in (task / "solution").iterdir()) == ["model.py", "naive", "solve.sh"]
            assert not (task / "environment" / "files" / "answer.json").exists()


def test_scenarios_with_integer_orders_get_the_long_limit(retail_rows, tmp_path):
    """The oracle's retail model keeps its 300 s inside the run's 360 s; the verifier timeout covers both."""
    assert (RETAIL_RUN_LIMIT_S, RETAIL_TIME_LIMIT_S) == ({"lp": 60.0, "integer": 360.0}, {"lp": 30.0, "integer": 300.0})
    mips = {"retail_f6_moq_binary_v0", "retail_f6_fixed_order_cost_v0", "retail_f6_pack_size_integer_v0"}
    for row in retail_rows:
        if row["scenario_id"] in mips | {"retail_f6_lead_time_v0"}:
            task = export_retail(row, tmp_path)
            config = contract.load(str(task / "tests"))
            integer = row["scenario_id"] in mips
            assert config.run.limits.solve_time_limit_s == (360.0 if integer else 60.0)
            assert f"timeout_sec = {480.0 if integer else 180.0}" in (task / "task.toml").read_text()
            assert (
                f"\nDEFAULT_TIME_LIMIT_S = {300.0 if integer else 30.0}\n"
                in (task / "solution" / "model.py").read_text()
            )
            assert f"**{360 if integer else 60} seconds**" in (task / "instruction.md").read_text()


def test_the_retail_verifier_image_installs_the_modelling_stack_and_the_spec_one_does_not(
    exported_retail, exported_specs
):
    """model.py runs in the separate verifier's python3; the bubblewrap environment mirrors those packages."""
    retail = _task(exported_retail) / "tests" / "Dockerfile"
    text = retail.read_text()
    assert f"RUN pip install --no-cache-dir {' '.join(MODELLING_PACKAGES)}\n" in text
    assert text.index("pip install") < text.index("COPY . /tests")
    assert read_dockerfile(retail).local_packages == ("ortools", "pyomo", "highspy", "numpy", "scipy")
    for spec in exported_specs["separate"].glob("*/tests/Dockerfile"):
        assert "pip install" not in spec.read_text() and read_dockerfile(spec).local_packages == ()
    assert not (_task(exported_retail, "shared") / "tests" / "Dockerfile").exists()


def test_spec_tasks_keep_their_short_verifier_and_answer_files(exported_specs):
    task = exported_specs["separate"] / "capacitated_facility_location"
    assert "timeout_sec = 60.0" in (task / "task.toml").read_text()
    assert "your answer files in `/app`" in " ".join((task / "instruction.md").read_text().split())
    assert isinstance(contract.load(str(task / "tests")), contract.SpecTask)


def test_every_hostile_answer_is_written_by_a_model_and_scores_zero(exported_retail, tmp_path):
    """The answer-file attacks of a RetailOpt task hand in a model.py (a typed file would test nothing),
    and blind-guess types the right answer with no model.py; each scores 0.0 when the verifier runs it."""
    task = _task(exported_retail)
    config = contract.load(str(task / "tests"))
    policies = {p.name: p for p in attack_policies(task, config)}
    hostile = [
        "objective-as-string",
        "objective-as-bool",
        "objective-nan",
        "objective-list",
        "duplicate-keys",
        "answer-list",
        "not-json",
        "symlink-tests",
        "read-tests",
        "fifo",
        "directory",
        "huge-file",
    ]
    assert set(hostile) | {"blind-guess", "blind-guess-idle-model", "snoop-expected"} <= set(policies)
    for name in hostile:
        assert set(policies[name].files) == {"model.py"}, name
    assert set(policies["blind-guess"].files) == {"answer.json"}
    assert set(policies["blind-guess-idle-model"].files) == {"answer.json", "model.py"}
    for name in [*hostile, "blind-guess", "blind-guess-idle-model"]:
        policy = policies[name]
        assert policy.expected == 0.0
        app = tmp_path / name / "app"
        app.mkdir(parents=True)
        for file, data in policy.files.items():
            (app / file).write_bytes(data)
        reward, details = _verify(task, app / "model.py", tmp_path / name)
        assert (reward, details["correct"]) == (0.0, 0), (name, details)
        if name not in ("blind-guess",):
            assert details["returncode"] == 0, (name, details)  # the program itself ran cleanly


def test_without_the_answer_checks_the_hostile_models_would_score(exported_retail, tmp_path, monkeypatch):
    """Mutation: a lax grader that looks for the right number anywhere in the answer lets the hedged forms
    through, so these models really hand the verifier those forms."""
    from orharbor.verifiers import modelling

    task = _task(exported_retail)
    objective = contract.load(str(task / "tests")).expected["objective"]

    def lax(raw: bytes, name: str = "answer.json"):
        if repr(objective).encode() not in raw:
            raise modelling.BadOutput("no right number")
        return "OPTIMAL", objective

    monkeypatch.setattr(modelling, "parse_answer", lax)
    policies = {p.name: p for p in attack_policies(task, contract.load(str(task / "tests")))}
    for name in ("objective-as-string", "objective-list", "duplicate-keys", "answer-list", "not-json"):
        app = tmp_path / name
        app.mkdir()
        (app / "model.py").write_bytes(policies[name].files["model.py"])
        reward, _ = _verify(task, app / "model.py", tmp_path)
        assert reward == 1.0, name


@pytest.mark.sandbox
def test_grading_the_typed_answer_would_let_the_blind_guess_through(exported_retail, tmp_path):
    """check --attacks: blind-guess holds at 0.0; with the verifier grading /app/answer.json as before, it scores 1.0."""
    from orharbor import check

    task = tmp_path / "tasks" / _task(exported_retail, "shared").name
    shutil.copytree(_task(exported_retail, "shared"), task)
    [defended] = check.check_tasks(task, jobs=2, attacks=True, only=("blind-guess",))
    assert [(p.policy, p.reward) for p in defended.policies] == [("blind-guess", 0.0)] and defended.ok
    for old, new in (
        ("import score_model_run, score_outputs", "import score_answer, score_model_run, score_outputs"),
        ("    run = task.run\n", '    return score_answer("/app/answer.json", task.expected)  # the old grader\n'),
    ):
        edit_bundled(task / "tests", "orharbor/verifiers/main.py", old, new)
    write_manifest(task / "tests")  # the weakened verifier is the task's own now, not a plant
    [weakened] = check.check_tasks(task, jobs=2, attacks=True, only=("blind-guess",))
    assert [(p.policy, p.reward) for p in weakened.policies] == [("blind-guess", 1.0)] and not weakened.ok
