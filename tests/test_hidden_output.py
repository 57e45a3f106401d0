"""Nothing the agent's program writes on a hidden instance reaches details.json.

details.json travels with the job folder (``harbor upload``, parity uploads).
A solve.py that prints its instance, or hides it in its solution (an extra
key, a key's name, a JSON string, a duplicate key, broken JSON), must not
publish the hidden instances there: a hidden run's row keeps the exit status,
wall time, time-out flag, feasible/objective/reward and a fixed reason
(:data:`orharbor.verifiers.score.HIDDEN_REASONS`). The run on the public
example keeps its stderr and full error message, for debugging.

The mutation tests put the old behaviour back (a hidden row with the run's
stderr tail, or the full error message quoting the solution) and show that
the same check then finds the hidden instances.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from orharbor import problem_modules
from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.algorithm import EXAMPLE_FILE
from orharbor.verifiers import contract, main, safe_json, score
from orharbor.verifiers.reward import FAIL
from orharbor.verifiers.solver_run import Limits

PROBLEM = "jobshop"
#: Length of the pieces of a hidden instance looked for in details.json.
WINDOW = 40


@pytest.fixture(scope="module")
def task(tmp_path_factory, shipped_rows) -> Path:
    """A small exported level-2 task: smoke size, 2 hidden instances, 10-second runs (the oracle's Python
    start must fit in a run on a loaded machine; no program here runs until it is stopped)."""
    smoke = problem_modules.get(PROBLEM).SIZES[0]
    row = dict(next(r for r in shipped_rows if (r["problem"], r["level"], r["size"]) == (PROBLEM, 2, smoke)))
    for key in (
        "eval_seeds",
        "eval_references",
        "eval_baselines",
        "eval_reference_solutions",
        "eval_baseline_solutions",
        "eval_reference_metas",
    ):
        row[key] = row[key][:2]
    row["solve_time_limit_s"] = 10.0
    return export_row(row, tmp_path_factory.mktemp("hidden-output"), ExportOptions())


#: How each leaking solve.py carries the instance (``text``: the instance file's text) into solution.json.
CARRIERS = {
    "extra-key": "json.dump({'starts': [], 'instance': text}, out)",
    "key-name": "json.dump({'starts': [], text: 1}, out)",
    "json-string": "json.dump(text, out)",
    "duplicate-key": "out.write('{' + json.dumps(text) + ': 1, ' + json.dumps(text) + ': 1}')",
    "not-json": "out.write(text + ' ' + text)",
}

LEAK = """import json, sys
text = open(sys.argv[1]).read().strip()
print(text)
print("instance:", text, file=sys.stderr)
print("instance again:", json.dumps(json.loads(text)), file=sys.stderr)
with open(sys.argv[2], "w") as out:
    {carrier}
"""


def leaking_program(tmp_path: Path, carrier: str, name: str = "solve.py") -> Path:
    path = tmp_path / name
    path.write_text(LEAK.format(carrier=CARRIERS[carrier]))
    return path


def verifier_details(task: Path, program: Path, tmp_path: Path) -> tuple[float, str]:
    """(reward, details.json's text) as the task's verifier writes them, the program run as us."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    reward, details = main.verify(
        str(task / "tests"), str(program), workroot=str(work), python=sys.executable, drop_privileges=False
    )
    logs = tmp_path / "logs"
    main.write_result(str(logs), reward, details)
    return reward, (logs / "details.json").read_text(encoding="utf-8")


def hidden_texts(task: Path) -> list[str]:
    """The text of each hidden instance file."""
    config = contract.load(str(task / "tests"))
    return [(task / "tests" / case.instance).read_text(encoding="utf-8").strip() for case in config.cases]


def public_text(task: Path) -> str:
    """The public example in every form a program may print it."""
    text = (task / "tests" / EXAMPLE_FILE).read_text(encoding="utf-8")
    return text + "\n" + json.dumps(json.loads(text))


def strings_of(value: Any) -> list[str]:
    """Every string (keys included) in a parsed JSON value."""
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *strings_of(item))]
    if isinstance(value, list):
        return [s for item in value for s in strings_of(item)]
    return [value] if isinstance(value, str) else []


def leaked_windows(details_text: str, hidden: list[str], public: str) -> list[str]:
    """The 40-character pieces of a hidden instance (not also in the public one) found in details.json.

    Looked for in the raw text and in every decoded string (JSON escapes the
    quotes of a printed instance). Every hidden instance must be long enough
    to be looked for at all.
    """
    haystacks = [details_text, *strings_of(json.loads(details_text))]
    found = []
    for text in hidden:
        windows = [text[i : i + WINDOW] for i in range(0, len(text) - WINDOW + 1, WINDOW // 4)]
        windows = [w for w in windows if w not in public]
        assert len(windows) >= 5, "the hidden instance is too short to look for"
        found += [w for w in windows if any(w in hay for hay in haystacks)]
    return found


@pytest.mark.parametrize("carrier", list(CARRIERS))
def test_a_program_printing_its_instance_publishes_nothing_of_it(task, tmp_path, carrier):
    """solve.py prints each instance and hides it in its solution: details.json holds no piece of a hidden
    instance, each hidden row gives a fixed reason; the public example's run keeps its stderr."""
    reward, text = verifier_details(task, leaking_program(tmp_path, carrier), tmp_path)
    assert reward == FAIL
    assert leaked_windows(text, hidden_texts(task), public_text(task)) == []
    details = json.loads(text)
    reasons = {template.split("{")[0] for template in score.HIDDEN_REASONS.values()}
    for row in details["instances"]:
        assert set(row) == {
            "index",
            "naive",
            "reference",
            "bound",
            "wall_s",
            "returncode",
            "timed_out",
            "feasible",
            "objective",
            "reward",
            "error",
        }
        assert any(row["error"].startswith(reason) for reason in reasons), row["error"]
    example = details["example"]
    assert "instance again:" in example["stderr_tail"] and '"machines"' in example["stderr_tail"]
    assert example["error"] and example["feasible"] == 0


def old_hidden_outcome(evaluate, case, run, limits, max_bytes):
    """The hidden row's outcome as it was: the run's stderr tail and the full error messages."""
    failed = {"feasible": 0, "objective": None, "reward": FAIL, "stderr_tail": run.stderr_tail[-2000:]}
    if run.timed_out:
        return {**failed, "error": f"timed out after {limits.solve_time_limit_s} s"}
    if run.solution_bytes is None:
        return {**failed, "error": run.error or f"solve.py exited with {run.returncode} and wrote no solution"}
    try:
        solution = safe_json.parse_strict(run.solution_bytes, "solution.json")
    except safe_json.BadOutput as exc:
        return {**failed, "error": str(exc)}
    return {**failed, **score.judge(evaluate, case["instance"], solution, case["naive"], case["reference"])}


def only_stderr(evaluate, case, run, limits, max_bytes):
    """Today's outcome plus the old stderr tail: the first half of the defect alone."""
    return {**NEW_OUTCOME(evaluate, case, run, limits, max_bytes), "stderr_tail": run.stderr_tail[-2000:]}


NEW_OUTCOME = score.hidden_outcome


@pytest.mark.parametrize("carrier", list(CARRIERS))
def test_mutation_the_old_rows_let_the_check_find_the_instances(task, tmp_path, monkeypatch, carrier):
    """With the old hidden rows back, the same check finds pieces of every hidden instance."""
    monkeypatch.setattr(score, "hidden_outcome", old_hidden_outcome)
    _, text = verifier_details(task, leaking_program(tmp_path, carrier), tmp_path)
    found = leaked_windows(text, hidden_texts(task), public_text(task))
    for hidden in hidden_texts(task):
        assert any(w in hidden for w in found)


def test_mutation_stderr_alone_leaks(task, tmp_path, monkeypatch):
    """The stderr tail alone is enough to publish every hidden instance."""
    monkeypatch.setattr(score, "hidden_outcome", only_stderr)
    _, text = verifier_details(task, leaking_program(tmp_path, "json-string"), tmp_path)
    found = leaked_windows(text, hidden_texts(task), public_text(task))
    assert all(any(w in hidden for w in found) for hidden in hidden_texts(task))


def test_mutation_an_error_message_alone_leaks(task, tmp_path, monkeypatch):
    """So is an error message quoting the solution (an unexpected key's name), from a program printing nothing."""
    monkeypatch.setattr(
        score,
        "hidden_outcome",
        lambda *args: {k: v for k, v in old_hidden_outcome(*args).items() if k != "stderr_tail"},
    )
    program = tmp_path / "solve.py"
    program.write_text(LEAK.format(carrier=CARRIERS["key-name"]).replace("print(", "(lambda *a, **k: 0)("))
    _, text = verifier_details(task, program, tmp_path)
    assert "instance:" not in text
    found = leaked_windows(text, hidden_texts(task), public_text(task))
    assert all(any(w in hidden for w in found) for hidden in hidden_texts(task))


# ------------------------------------------------------------------ the public example


def test_the_example_run_does_not_count_and_keeps_its_output(task, tmp_path):
    """The oracle scores 1.0 whatever its example run does; that run's output and naive value are kept."""
    program = tmp_path / "solve.py"
    program.write_text(
        "import sys\nprint('hello from the example', file=sys.stderr)\n" + (task / "solution" / "solve.py").read_text()
    )
    reward, text = verifier_details(task, program, tmp_path)
    details = json.loads(text)
    assert reward == 1.0 and len(details["instances"]) == 2 and details["feasible"] == 1
    example = details["example"]
    config = contract.load(str(task / "tests"))
    assert example["feasible"] == 1 and example["objective"] == example["naive"] == config.example.naive
    assert "hello from the example" in example["stderr_tail"] and "reward" not in example
    assert all("hello" not in json.dumps(row) for row in details["instances"])


def test_the_example_is_the_agents_first_example(task):
    """tests/example.json is environment/examples/example_0.json, named in task.json with its digest."""
    config = contract.load(str(task / "tests"))
    assert config.example is not None and config.example.instance == EXAMPLE_FILE
    public = (task / "environment" / "examples" / "example_0.json").read_bytes()
    assert (task / "tests" / EXAMPLE_FILE).read_bytes() == public
    from orharbor.jsonio import digest

    assert config.example.instance_sha256 == digest(json.loads(public))
    assert all(config.example.instance_sha256 != case.instance_sha256 for case in config.cases)


def test_the_verifier_timeout_allows_the_example_run(task):
    """task.toml's verifier timeout counts one run more than there are hidden instances."""
    import tomllib

    toml = tomllib.loads((task / "task.toml").read_text())
    config = contract.load(str(task / "tests"))
    runs = len(config.cases) + 1
    assert toml["verifier"]["timeout_sec"] == runs * (config.run.limits.solve_time_limit_s + 15.0) + 120.0


def test_an_old_task_json_without_example_still_scores(task, tmp_path):
    """A task.json written before the example field loads (example None) and scores without an example run."""
    import shutil

    copy = tmp_path / "task"
    shutil.copytree(task, copy)
    tests = copy / "tests"
    tests.chmod(0o700)
    data = json.loads((tests / contract.TASK_FILE).read_text())
    del data["example"]
    (tests / contract.TASK_FILE).chmod(0o600)
    (tests / contract.TASK_FILE).write_text(json.dumps(data))
    assert contract.load(str(tests)).example is None
    reward, text = verifier_details(copy, copy / "solution" / "solve.py", tmp_path)
    assert reward == 1.0 and "example" not in json.loads(text)


def test_isolated_runs_give_the_example_a_uid_of_its_own(task, tmp_path, monkeypatch):
    """Locked down, program_runs hands out one uid per hidden instance plus one for the example, all distinct."""

    class FakeLockdown:
        open_dirs = ("/dev/shm",)

        def run_uids(self, count):
            return list(range(61000, 61000 + count))

    seen = {}
    monkeypatch.setattr(main.lockdown, "lock", lambda: FakeLockdown())
    monkeypatch.setattr(main.lockdown, "restore", lambda state: None)
    monkeypatch.setattr(main, "score_level2", lambda *args, **kwargs: seen.update(kwargs) or (0.0, {}))
    root = tmp_path / "runs"
    main.verify(str(task / "tests"), str(task / "solution" / "solve.py"), workroot=str(root), isolate=True)
    assert len(seen["uids"]) == 2 and seen["example_uid"] is not None
    assert len({*seen["uids"], seen["example_uid"]}) == 3
    assert seen["example"]["instance_bytes"] == (task / "tests" / EXAMPLE_FILE).read_bytes()


def test_every_hidden_reason_is_fixed_text():
    """The reasons name only verifier-known numbers: a limit, the exit status."""
    for template in score.HIDDEN_REASONS.values():
        fields = {part.split("}")[0].split(":")[0] for part in template.split("{")[1:]}
        assert fields <= {"time_limit", "returncode", "disk_mb", "max_files", "max_bytes"}, template


def test_a_disk_stop_is_a_fixed_reason(tmp_path):
    """A run stopped for its disk use gives the fixed reason, not the run's message."""
    from orharbor.verifiers.solver_run import OVER_DISK, RunResult

    run = RunResult(-9, False, 0.5, "out", "secret stderr", None, "stopped: whatever", OVER_DISK)
    limits = Limits()
    outcome = score.hidden_outcome(
        score.evaluator(PROBLEM), {"instance": {}, "naive": 1, "reference": 0}, run, limits, 100
    )
    assert outcome["error"] == f"stopped: kept more than {limits.disk_mb} MiB or {limits.max_files} files on disk"
    assert "secret" not in json.dumps(outcome)
