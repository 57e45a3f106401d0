"""The modelling grader: answer files are hostile input, rewards are 1.0 or 0.0 and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from orharbor.verifiers import contract
from orharbor.verifiers import main as verifier_main
from orharbor.verifiers.modelling import check_output, parse_number, read_answer, score_answer, score_outputs, within
from orharbor.verifiers.safe_json import BadOutput
from orharbor.verifiers.solver_run import Limits
from orharbor.verifiers.strict import Infeasible

NUMERIC = {"value": 2300.0, "rel_tol": 1e-6, "abs_tol": 1e-9}
ANSWER = {"status": "OPTIMAL", "objective": 378951.5, "rel_tol": 1e-4}


@pytest.mark.parametrize(
    "text, value",
    [("2300", 2300.0), (" 2300.0\n", 2300.0), ("2.3e3", 2300.0), ("-0.5", -0.5), (".5", 0.5), ("+7", 7.0)],
)
def test_numbers_are_read_strictly(text, value):
    assert parse_number(text, "x.txt") == value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "nan",
        "NaN",
        "inf",
        "-Infinity",
        "1e99999",
        "2300 2301",
        "2,300",
        "about 2300",
        "0x10",
        "[2300]",
        "True",
        "2300\n2301",
        "1_000",
    ],
)
def test_anything_but_one_finite_number_is_refused(text):
    with pytest.raises(Infeasible, match="x.txt"):
        parse_number(text, "x.txt")


def test_tolerance_is_relative_to_the_expected_value_with_an_absolute_floor():
    assert within(1000.0009, 1000.0, 1e-6, 0.0) and not within(1000.0011, 1000.0, 1e-6, 0.0)
    assert within(1e-10, 0.0, 1e-6, 1e-9) and not within(1e-8, 0.0, 1e-6, 1e-9)


def test_exact_text_outputs_compare_after_trimming_only():
    assert check_output("S02,S09\n", "open.txt", {"text": "S02,S09"}) is None
    assert "not the expected answer" in check_output("S09,S02", "open.txt", {"text": "S02,S09"})
    assert check_output("s02,s09", "open.txt", {"text": "S02,S09"}) is not None


def _app(tmp_path, files: dict[str, bytes]):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return str(tmp_path)


def test_all_outputs_must_match_for_a_reward(tmp_path):
    outputs = {"profit.txt": NUMERIC, "chairs.txt": {"text": "30"}}
    good = _app(tmp_path, {"profit.txt": b"2300.0000001\n", "chairs.txt": b" 30 \n"})
    assert score_outputs(good, outputs)[0] == 1.0
    (tmp_path / "chairs.txt").write_bytes(b"31")
    reward, details = score_outputs(good, outputs)
    assert (reward, details["executed"], details["correct"], details["matched"]) == (0.0, 1, 0, 1)
    assert "chairs.txt" in details["error"]


def test_missing_output_is_not_executed(tmp_path):
    reward, details = score_outputs(
        _app(tmp_path, {"profit.txt": b"2300"}), {"profit.txt": NUMERIC, "chairs.txt": {"text": "30"}}
    )
    assert (reward, details["executed"]) == (0.0, 0) and "chairs.txt does not exist" in details["error"]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: os.symlink("/etc/hostname", p), "cannot be opened as a regular file"),
        (lambda p: os.mkfifo(p), "not a regular file"),
        (lambda p: os.mkdir(p), "not a regular file"),
        (lambda p: open(p, "wb").truncate(5 << 20), "over the limit"),
        (lambda p: open(p, "wb").write(b"\xff\xfe2300"), "not UTF-8"),
    ],
)
def test_hostile_files_score_zero_with_a_message(tmp_path, make, message):
    make(str(tmp_path / "profit.txt"))
    reward, details = score_outputs(str(tmp_path), {"profit.txt": NUMERIC})
    assert reward == 0.0 and details["executed"] == 0 and message in details["error"]


def _answer(tmp_path, text: str) -> str:
    path = tmp_path / "answer.json"
    path.write_text(text)
    return str(path)


def test_answer_within_tolerance_is_correct(tmp_path):
    reward, details = score_answer(_answer(tmp_path, '{"status": "optimal", "objective": 378980}'), ANSWER)
    assert (reward, details["executed"], details["correct"]) == (1.0, 1, 1)
    reward, details = score_answer(_answer(tmp_path, '{"status": "OPTIMAL", "objective": 379000}'), ANSWER)
    assert (reward, details["executed"], details["correct"]) == (0.0, 1, 0)
    assert "not within" in details["error"]


def test_status_must_match_the_reference(tmp_path):
    reward, details = score_answer(_answer(tmp_path, '{"status": "INFEASIBLE", "objective": null}'), ANSWER)
    assert (reward, details["executed"]) == (0.0, 1) and "status INFEASIBLE" in details["error"]
    infeasible = {"status": "INFEASIBLE", "objective": None, "rel_tol": 1e-4}
    assert score_answer(_answer(tmp_path, '{"status": "INFEASIBLE"}'), infeasible)[0] == 1.0


@pytest.mark.parametrize(
    "text, message",
    [
        ("[]", "JSON object"),
        ('{"objective": 378951.5}', "'status' must be one of"),
        ('{"status": "SOLVED", "objective": 378951.5}', "'status' must be one of"),
        ('{"status": 2, "objective": 378951.5}', "'status' must be one of"),
        ('{"status": "OPTIMAL"}', "'objective' must be a number"),
        ('{"status": "OPTIMAL", "objective": "378951.5"}', "'objective' must be a number"),
        ('{"status": "OPTIMAL", "objective": true}', "'objective' must be a number"),
        ('{"status": "OPTIMAL", "objective": NaN}', "NaN is not allowed"),
        ('{"status": "OPTIMAL", "objective": 1e999}', "overflows"),
        ('{"status": "OPTIMAL", "objective": 0, "objective": 378951.5}', "duplicate"),
        ("\udcff{", "not valid UTF-8"),
    ],
)
def test_malformed_answers_are_not_executed(tmp_path, text, message):
    path = tmp_path / "answer.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises((BadOutput, Infeasible), match=message):
        read_answer(str(path))
    reward, details = score_answer(str(path), ANSWER)
    assert (reward, details["executed"], details["correct"]) == (0.0, 0, 0) and details["error"]


def _retail_tests_dir(tmp_path, monkeypatch) -> str:
    """tests/ of a RetailOpt task whose model.py runs under this interpreter, as this user, within 60 s (far
    above the Python start these models need, so a busy CPU cannot turn their answer into a time-out).

    The verifier, as root, would run it as the task's uid, which cannot read this
    checkout's interpreter; as every other ``orharbor verify`` path does, this one
    keeps our own uid (None), never naming it.
    """
    tests = tmp_path / "tests"
    tests.mkdir()
    monkeypatch.setattr(verifier_main.Scoring, "uid", lambda self, run: None)
    run = contract.ProgramRun(
        python=sys.executable,
        uid=65534,
        limits=Limits(solve_time_limit_s=60.0),
        argv=("model.py", "data.json", "answer.json"),
        data="data.json",
        output="answer.json",
    )
    task = contract.RetailTask(task_id="t", deliverables=("/app/model.py",), expected=ANSWER, run=run)
    (tests / "task.json").write_text(json.dumps(contract.dump(task)))
    return str(tests)


def test_reward_json_holds_the_reward_and_details_json_executed_and_correct(tmp_path, monkeypatch):
    """reward.json is {"reward": x} alone (one key for Harbor's mean and pass@k); the 0/1 figures are in details."""
    tests = _retail_tests_dir(tmp_path, monkeypatch)
    (tmp_path / "tests" / "data.json").write_text("{}")
    logs = tmp_path / "logs"
    model = tmp_path / "model.py"
    model.write_text('import sys\nopen(sys.argv[2], \'w\').write(\'{"status": "OPTIMAL", "objective": 378951.5}\')\n')
    verifier_main.main(["--tests-dir", tests, "--deliverable", str(model), "--logs-dir", str(logs)])
    assert json.loads((logs / "reward.json").read_text()) == {"reward": 1.0}
    details = json.loads((logs / "details.json").read_text())
    assert (details["kind"], details["executed"], details["correct"]) == ("modelling", 1, 1)


def test_a_verifier_crash_in_a_modelling_task_scores_zero_not_minus_one(tmp_path, monkeypatch):
    """A bug of ours scores 0.0, and details.json still holds executed and correct (both 0)."""
    tests = _retail_tests_dir(tmp_path, monkeypatch)
    monkeypatch.setattr(verifier_main, "verify", lambda *a, **k: 1 / 0)
    logs = tmp_path / "logs"
    verifier_main.main(["--tests-dir", tests, "--logs-dir", str(logs)])
    assert json.loads((logs / "reward.json").read_text()) == {"reward": 0.0}
    details = json.loads((logs / "details.json").read_text())
    assert "ZeroDivisionError" in details["traceback"] and (details["executed"], details["correct"]) == (0, 0)


@pytest.mark.parametrize(
    "kind, reward, outcome",
    [
        ("modelling", 0.0, {"executed": 0, "correct": 0}),
        ("algorithm", -1.0, {"feasible": 0}),
    ],
)
def test_tampering_still_writes_the_outcome_figures(tmp_path, monkeypatch, kind, reward, outcome):
    """A tampered verifier environment scores the failure reward, and details.json says 0 for every figure."""
    config = {"format_version": 2, "kind": "spec" if kind == "modelling" else "level1"}
    (tmp_path / "task.json").write_text(json.dumps(config))
    monkeypatch.setattr(verifier_main, "end_foreign_processes", lambda: 0)
    monkeypatch.setattr(verifier_main, "tampering", lambda: ["python3 replaced"])
    logs = tmp_path / "logs"
    verifier_main.main(["--tests-dir", str(tmp_path), "--logs-dir", str(logs), "--in-container"])
    assert json.loads((logs / "reward.json").read_text()) == {"reward": reward}
    details = json.loads((logs / "details.json").read_text())
    assert details["kind"] == kind and "tampered: python3 replaced" in details["error"]
    assert {key: details[key] for key in outcome} == outcome


def test_test_sh_fallback_writes_the_failure_reward_of_each_kind(tmp_path):
    from orharbor.exporter.task_dir import write_test_sh
    from orharbor.verifiers.contract import KINDS

    write_test_sh(tmp_path, KINDS["spec"])
    text = (tmp_path / "test.sh").read_text()
    assert "'{\"reward\": 0.0}'" in text and "-1.0" not in text and '"executed": 0, "correct": 0' in text
    write_test_sh(tmp_path, KINDS["level1"])
    text = (tmp_path / "test.sh").read_text()
    assert "'{\"reward\": -1.0}'" in text and '"feasible": 0' in text and "executed" not in text
    result = subprocess.run(["bash", "-n", str(tmp_path / "test.sh")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "modelling, reward, outcome",
    [
        (True, 0.0, {"kind": "modelling", "executed": 0, "correct": 0}),
        (False, -1.0, {"kind": "algorithm", "feasible": 0}),
    ],
)
def test_test_sh_fallback_runs_when_python_fails(tmp_path, modelling, reward, outcome):
    """With the interpreter failing, test.sh replaces planted files with the failure reward and details."""
    from orharbor.exporter.task_dir import write_test_sh
    from orharbor.verifiers.contract import KINDS

    write_test_sh(tmp_path, KINDS["spec" if modelling else "level2"])
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "details.json").symlink_to(tmp_path / "elsewhere.json")
    (logs / "reward.json").mkdir()
    script = (
        (tmp_path / "test.sh")
        .read_text()
        .replace("/logs/verifier", str(logs))
        .replace("/usr/local/bin/python3", "false")
        .replace("/tests", str(tmp_path / "no-tests"))
        .replace("reason=$(untrusted_interpreter)\n", "reason=\n")
    )  # this machine has no image record
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "verifier failed" in result.stdout, result.stderr
    assert json.loads((logs / "reward.json").read_text()) == {"reward": reward}
    details = json.loads((logs / "details.json").read_text())
    assert not (logs / "details.json").is_symlink() and not (tmp_path / "elsewhere.json").exists()
    assert {key: details[key] for key in outcome} == outcome and "verifier failed" in details["error"]


@pytest.mark.parametrize("modelling, reward", [(True, 0.0), (False, -1.0)])
def test_test_sh_fallback_replaces_a_dangling_symlink_at_the_reward_folder(tmp_path, modelling, reward):
    """/logs/verifier replaced by a dangling symlink: the fallback still leaves a reward in a real folder."""
    from orharbor.exporter.task_dir import write_test_sh
    from orharbor.verifiers.contract import KINDS

    write_test_sh(tmp_path, KINDS["spec" if modelling else "level2"])
    logs = tmp_path / "logs"
    logs.symlink_to(tmp_path / "nowhere" / "logs")
    script = (
        (tmp_path / "test.sh")
        .read_text()
        .replace("/logs/verifier", str(logs))
        .replace("/usr/local/bin/python3", "false")
        .replace("/tests", str(tmp_path / "no-tests"))
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert logs.is_dir() and not logs.is_symlink() and not (tmp_path / "nowhere").exists()
    assert json.loads((logs / "reward.json").read_text()) == {"reward": reward}


@pytest.mark.parametrize("planted", ["dangling-symlink", "file", "symlink-to-elsewhere"])
def test_verifier_replaces_whatever_stands_at_the_reward_folder(tmp_path, monkeypatch, planted):
    """The verifier writes its reward into a real folder, whatever the agent left at the folder's path."""
    (tmp_path / "task.json").write_text(
        json.dumps({"format_version": 2, "kind": "level1", "problem": "jobshop", "instance": "nope.json"})
    )
    logs = tmp_path / "logs"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if planted == "dangling-symlink":
        logs.symlink_to(tmp_path / "nowhere")
    elif planted == "file":
        logs.write_text("x")
    else:
        logs.symlink_to(elsewhere)
    verifier_main.main(["--tests-dir", str(tmp_path), "--logs-dir", str(logs)])
    assert logs.is_dir() and not logs.is_symlink()
    assert json.loads((logs / "reward.json").read_text()) == {"reward": -1.0}
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "nowhere").exists()
    # Without the defence, the dangling symlink leaves no reward at all: the verifier itself fails.
    if planted == "dangling-symlink":
        for child in logs.iterdir():
            child.unlink()
        logs.rmdir()
        logs.symlink_to(tmp_path / "nowhere")
        monkeypatch.setattr(verifier_main, "_real_dirs", lambda path: os.makedirs(path, exist_ok=True))
        with pytest.raises(OSError):
            verifier_main.main(["--tests-dir", str(tmp_path), "--logs-dir", str(logs)])
