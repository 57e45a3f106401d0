"""score: level-1 solution files and level-2 solve.py programs, scored with the real jobshop verifier."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.jobshop.baseline import dispatch, round_robin
from orharbor.verifiers import score
from orharbor.verifiers.reward import FAIL, reward
from orharbor.verifiers.solver_run import Limits

from waiting import wait_until

js = problem_modules.get("jobshop")
SEEDS = (0, 1)
#: The per-run limit of programs expected to finish (a Python start and a lookup): far above what they
#: need on any machine, so a busy CPU cannot turn their answer into a time-out.
ROOMY = Limits(solve_time_limit_s=60)


@pytest.fixture(scope="module")
def evaluate():
    return score.evaluator("jobshop")


@pytest.fixture(scope="module")
def solved() -> list[dict]:
    """4x4 instances with their baseline and reference solutions and objectives (verifier-computed).

    The reference is whatever CP-SAT returns at its limit (the tests use its own value); at any
    limit it is no worse than its round-robin start, which beats the baseline on these seeds.
    """
    out = []
    for seed in SEEDS:
        inst = js.generate(seed, "4x4")
        base = js.baseline(inst)
        ref, _ = js.reference(inst, time_limit_s=1, workers=1)
        out.append(
            {
                "instance": inst,
                "baseline": base,
                "reference_solution": ref,
                "naive": js.evaluate(inst, base),
                "reference": js.evaluate(inst, ref),
            }
        )
    assert all(s["reference"] < s["naive"] for s in out)  # the reward formula has room on these
    return out


def make_cases(solved: list[dict]) -> list[dict]:
    return [
        {
            "instance": s["instance"],
            "instance_bytes": json.dumps(s["instance"]).encode(),
            "naive": s["naive"],
            "reference": s["reference"],
        }
        for s in solved
    ]


def write_json(path: Path, value) -> str:
    path.write_text(json.dumps(value))
    return str(path)


def write_program(tmp_path: Path, text: str, name: str = "solve.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_level2(
    evaluate, tmp_path: Path, program: str, cases: list[dict], limits: Limits = ROOMY, **kwargs
) -> tuple[float, dict, float]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    start = time.monotonic()
    total, details = score.score_level2(
        evaluate, program, cases, sys.executable, limits, uid=None, workroot=str(work), **kwargs
    )
    return total, details, time.monotonic() - start


# ------------------------------------------------------------------ level 1


def test_evaluator_is_jobshop_evaluate():
    """evaluator('jobshop') is the problem's standard-library evaluate."""
    assert score.evaluator("jobshop") is js.evaluate


def test_level1_reference_solution_scores_one(evaluate, solved, tmp_path):
    """The reference solution file scores 1.0 with its objective reported."""
    s = solved[0]
    path = write_json(tmp_path / "solution.json", s["reference_solution"])
    value, details = score.score_level1(evaluate, s["instance"], path, s["naive"], s["reference"])
    assert value == 1.0
    assert details == {
        "feasible": 1,
        "objective": s["reference"],
        "reward": 1.0,
        "error": None,
        "naive": s["naive"],
        "reference": s["reference"],
    }


def test_level1_baseline_solution_scores_zero(evaluate, solved, tmp_path):
    """The naive baseline's solution file scores 0.0."""
    s = solved[0]
    path = write_json(tmp_path / "solution.json", s["baseline"])
    value, details = score.score_level1(evaluate, s["instance"], path, s["naive"], s["reference"])
    assert value == 0.0
    assert details["feasible"] == 1 and details["objective"] == s["naive"]


def test_level1_round_robin_follows_formula(evaluate, solved, tmp_path):
    """A feasible solution between naive and reference scores the DESIGN.md formula."""
    s = solved[1]
    solution = dispatch(s["instance"], round_robin(s["instance"]))
    objective = js.evaluate(s["instance"], solution)
    path = write_json(tmp_path / "solution.json", solution)
    value, details = score.score_level1(evaluate, s["instance"], path, s["naive"], s["reference"])
    assert details["objective"] == objective
    assert value == pytest.approx(max(-1.0, (s["naive"] - objective) / (s["naive"] - s["reference"])))


def _shifted(solution: dict) -> dict:
    """The solution with job 0's second operation moved to time 0 (before its predecessor ends)."""
    starts = [list(row) for row in solution["starts"]]
    starts[0][1] = 0
    return {"starts": starts}


BROKEN_LEVEL1 = [
    ("precedence", lambda s: json.dumps(_shifted(s)).encode(), r"^infeasible: job 0 operation 1 starts at 0"),
    ("missing-key", lambda s: b'{"start": []}', r"^infeasible: solution: missing key 'starts'"),
    ("extra-key", lambda s: json.dumps(dict(s, makespan=1)).encode(), r"unexpected key 'makespan'"),
    (
        "short-list",
        lambda s: json.dumps({"starts": s["starts"][:3]}).encode(),
        r"solution\.starts: expected 4 items, got 3",
    ),
    (
        "float-start",
        lambda s: json.dumps({"starts": [[float(x) for x in r] for r in s["starts"]]}).encode(),
        r"solution\.starts\[0\]\[0\]: expected an integer, got float",
    ),
    (
        "negative-start",
        lambda s: json.dumps({"starts": [[-1] + r[1:] for r in s["starts"]]}).encode(),
        r"-1 is below the minimum 0",
    ),
    ("not-json", lambda s: b"starts = [[0]]", r"^solution\.json is not valid JSON"),
    ("nan", lambda s: b'{"starts": [[NaN]]}', r"^solution\.json: NaN is not allowed"),
    ("duplicate-key", lambda s: b'{"starts": [], "starts": []}', r"^solution\.json: duplicate key 'starts'"),
    ("top-level-list", lambda s: json.dumps(s["starts"]).encode(), r"expected a JSON object, got list"),
]


@pytest.mark.parametrize("make, message", [c[1:] for c in BROKEN_LEVEL1], ids=[c[0] for c in BROKEN_LEVEL1])
def test_level1_broken_solution_scores_fail(evaluate, solved, tmp_path, make, message):
    """Each broken solution file scores -1.0 and the details say why."""
    s = solved[0]
    path = tmp_path / "solution.json"
    path.write_bytes(make(s["reference_solution"]))
    value, details = score.score_level1(evaluate, s["instance"], str(path), s["naive"], s["reference"])
    assert value == FAIL
    assert details["reward"] == FAIL and details["feasible"] == 0 and details["objective"] is None
    assert details["naive"] == s["naive"] and details["reference"] == s["reference"]
    assert re.search(message, details["error"]), details["error"]


def test_level1_missing_file_scores_fail(evaluate, solved, tmp_path):
    """No solution file at all scores -1.0 with a 'does not exist' message."""
    s = solved[0]
    value, details = score.score_level1(
        evaluate, s["instance"], str(tmp_path / "solution.json"), s["naive"], s["reference"]
    )
    assert value == FAIL
    assert "does not exist" in details["error"]


def test_level1_symlinked_solution_scores_fail(evaluate, solved, tmp_path):
    """A symlink to the correct answer still scores -1.0: the deliverable must be a regular file."""
    s = solved[0]
    real = write_json(tmp_path / "real.json", s["reference_solution"])
    (tmp_path / "solution.json").symlink_to(real)
    value, details = score.score_level1(
        evaluate, s["instance"], str(tmp_path / "solution.json"), s["naive"], s["reference"]
    )
    assert value == FAIL
    assert "cannot be opened as a regular file" in details["error"]


def test_level1_oversized_file_scores_fail(evaluate, solved, tmp_path):
    """A solution over max_bytes scores -1.0 even if it is the reference."""
    s = solved[0]
    path = write_json(tmp_path / "solution.json", s["reference_solution"])
    value, details = score.score_level1(evaluate, s["instance"], path, s["naive"], s["reference"], max_bytes=10)
    assert value == FAIL
    assert "over the limit of 10" in details["error"]


def test_judge_turns_verifier_crash_into_fail(solved):
    """An evaluate that raises a non-Infeasible error on hostile input is scored -1.0, not propagated."""

    def crashing(instance, solution):
        raise KeyError("starts")

    details = score.judge(crashing, solved[0]["instance"], {}, 10, 5)
    assert details == {"feasible": 0, "objective": None, "reward": FAIL, "error": "malformed solution: KeyError"}


# ------------------------------------------------------------------ level 2

LOOKUP_PROGRAM = """
import json, sys
ANSWERS = json.loads({answers!r})
with open(sys.argv[1]) as f:
    instance = json.load(f)
with open(sys.argv[2], "w") as f:
    json.dump(ANSWERS[instance["name"]], f)
"""

ROUND_ROBIN_PROGRAM = """
import json, sys
inst = json.load(open(sys.argv[1]))
n, m = inst["n_jobs"], inst["n_machines"]
nxt, job_end, mach_end = [0] * n, [0] * n, [0] * m
starts = [[0] * m for _ in range(n)]
for _ in range(m):
    for j in range(n):
        k = nxt[j]
        machine = inst["machines"][j][k]
        s = max(job_end[j], mach_end[machine])
        starts[j][k] = s
        job_end[j] = mach_end[machine] = s + inst["durations"][j][k]
        nxt[j] = k + 1
json.dump({"starts": starts}, open(sys.argv[2], "w"))
"""


def lookup(answers: dict) -> str:
    return LOOKUP_PROGRAM.format(answers=json.dumps(answers))


def test_level2_lookup_program_scores_mean_reward(evaluate, solved, tmp_path):
    """A solve.py answering the reference on one instance and the baseline on the other scores their mean."""
    answers = {
        solved[0]["instance"]["name"]: solved[0]["reference_solution"],
        solved[1]["instance"]["name"]: solved[1]["baseline"],
    }
    program = write_program(tmp_path, lookup(answers))
    total, details, _ = run_level2(evaluate, tmp_path, program, make_cases(solved))
    expected = [
        reward(solved[0]["reference"], solved[0]["naive"], solved[0]["reference"]),
        reward(solved[1]["naive"], solved[1]["naive"], solved[1]["reference"]),
    ]
    assert [row["reward"] for row in details["instances"]] == expected == [1.0, 0.0]
    assert total == pytest.approx(sum(expected) / 2)
    assert details["feasible"] == 1
    assert [row["index"] for row in details["instances"]] == [0, 1]
    assert all(row["returncode"] == 0 and not row["timed_out"] and row["error"] is None for row in details["instances"])


def test_level2_round_robin_program_scores_formula(evaluate, solved, tmp_path):
    """A self-contained round-robin dispatcher scores the formula on each instance's own objective."""
    program = write_program(tmp_path, ROUND_ROBIN_PROGRAM)
    total, details, _ = run_level2(evaluate, tmp_path, program, make_cases(solved))
    expected = []
    for s in solved:
        objective = js.evaluate(s["instance"], dispatch(s["instance"], round_robin(s["instance"])))
        expected.append(max(-1.0, (s["naive"] - objective) / (s["naive"] - s["reference"])))
    assert [row["reward"] for row in details["instances"]] == pytest.approx(expected)
    assert total == pytest.approx(sum(expected) / len(expected))


def test_level2_runs_isolated_in_empty_directory(evaluate, solved, tmp_path):
    """solve.py runs with python -I in a directory holding only solve.py and instance.json."""
    marker = tmp_path / "seen.json"
    program = write_program(
        tmp_path,
        f"""
import json, os, sys
json.dump({{"isolated": sys.flags.isolated, "files": sorted(os.listdir(".")), "argv": sys.argv[1:],
           "pythonpath": os.environ.get("PYTHONPATH")}}, open({str(marker)!r}, "w"))
""",
    )
    total, details, _ = run_level2(evaluate, tmp_path, program, make_cases(solved[:1]))
    seen = json.loads(marker.read_text())
    assert seen == {
        "isolated": 1,
        "files": ["instance.json", "solve.py"],
        "argv": ["instance.json", "solution.json"],
        "pythonpath": None,
    }
    assert total == FAIL
    assert details["instances"][0]["error"] == "solve.py exited with 0 and wrote no solution"


def test_level2_no_cases_scores_fail(evaluate, tmp_path):
    """With no evaluation instances the level-2 reward is -1.0 and nothing is feasible."""
    program = write_program(tmp_path, ROUND_ROBIN_PROGRAM)
    total, details, _ = run_level2(evaluate, tmp_path, program, [])
    assert total == FAIL
    assert details == {"instances": [], "feasible": 0}


def test_level2_timeout(evaluate, solved, tmp_path):
    """A solve.py that sleeps forever is stopped at wall_s and scores -1.0 'timed out'.

    That the run came back at all shows it was stopped; that it took at least its limit, that it
    was not stopped early (a lower bound no slow machine can break).
    """
    program = write_program(tmp_path, "import time\nwhile True:\n    time.sleep(60)\n")
    total, details, elapsed = run_level2(
        evaluate, tmp_path, program, make_cases(solved[:1]), Limits(solve_time_limit_s=1)
    )
    row = details["instances"][0]
    assert total == FAIL
    assert row["timed_out"] is True and row["reward"] == FAIL
    assert row["error"].startswith("timed out after 1")
    assert elapsed >= 1.0


def test_level2_timeout_after_writing_answer_still_fails(evaluate, solved, tmp_path):
    """A correct solution written before overrunning the wall clock does not count."""
    answers = {solved[0]["instance"]["name"]: solved[0]["reference_solution"]}
    program = write_program(tmp_path, lookup(answers) + "import time\ntime.sleep(60)\n")
    total, details, elapsed = run_level2(
        evaluate, tmp_path, program, make_cases(solved[:1]), Limits(solve_time_limit_s=1)
    )
    assert total == FAIL and details["instances"][0]["timed_out"] is True
    assert elapsed < 60  # stopped at its 1 s, not waited for through its own 60 s sleep (generous on purpose)


def _alive(pid: int, started: str) -> bool:
    """Whether process ``pid`` still runs and is the one that started at ``started`` (not a recycled pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0] not in ("Z", "X") and fields[19] == started  # state; starttime (field 22)


#: solve.py's start: fork a child that would outlive the run (it sleeps 600 s, far past the run's
#: limit), and wait on a pipe until the child runs before answering.
FORKING = """import os, time
read, write = os.pipe()
child = os.fork()
if child == 0:
    {escape}os.write(write, b"x")
    time.sleep(600)
    os._exit(0)
os.read(read, 1)
"""
#: ... then, where the run's files are not removed afterwards, record the child's pid and start time
#: (written whole, then renamed into place).
RECORD = """with open({path!r} + ".part", "w") as f:
    f.write(str(child) + " " + open(f"/proc/{{child}}/stat").read().rsplit(")", 1)[1].split()[19])
os.rename({path!r} + ".part", {path!r})
"""


def test_level2_forked_child_is_killed(evaluate, solved, tmp_path):
    """A child that solve.py forks and leaves behind is killed when solve.py exits, and the run does not wait
    for it: the child would sleep far past the run's limit, so a run that waited would have timed out."""
    record = tmp_path / "child"
    answers = {solved[0]["instance"]["name"]: solved[0]["reference_solution"]}
    program = write_program(tmp_path, FORKING.format(escape="") + RECORD.format(path=str(record)) + lookup(answers))
    total, details, _ = run_level2(evaluate, tmp_path, program, make_cases(solved[:1]))
    assert total == 1.0 and details["instances"][0]["timed_out"] is False  # scored normally, not waited for
    pid, started = record.read_text().split()
    wait_until(lambda: not _alive(int(pid), started), "the forked child's end", timeout=60)


@pytest.fixture
def shared_workroot():
    """A workroot an unprivileged uid can traverse (tmp_path's parents are 0700)."""
    path = tempfile.mkdtemp(prefix="orh-test-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _unused_uid() -> int:
    """A uid with no account and no process, so killing "every process of the uid" touches only the test's; picked
    per run (from this process's pid), since a second suite beside this one may run this test at the same moment."""
    for uid in range(50000 + os.getpid() % 9000, 60000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if not _processes_of(uid):
                return uid
    raise AssertionError("no unused uid between 50000 and 60000")


def _processes_of(uid: int) -> list[int]:
    """The live processes (not zombies) that run as ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{name}/status").read_text() if name.isdigit() else ""
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if str(uid) in fields.get("Uid", "").split() and not fields.get("State", "").strip().startswith(("Z", "X")):
            found.append(int(name))
    return found


def test_level2_escaped_child_is_killed_by_uid(evaluate, solved, shared_workroot):
    """Run as an unprivileged uid, a child that leaves the process group (setsid) is killed too: once the
    run is over, no process of that uid is left."""
    assert os.geteuid() == 0, "dropping to another uid needs root"
    unused_uid = _unused_uid()
    answers = {solved[0]["instance"]["name"]: solved[0]["reference_solution"]}
    program_path = Path(shared_workroot) / "solve.py"
    program_path.write_text(FORKING.format(escape="os.setsid()\n    ") + lookup(answers))
    python = shutil.which("python3", path="/usr/bin:/bin")  # readable by any uid, unlike a venv under /root
    assert python
    total, details = score.score_level2(
        evaluate, str(program_path), make_cases(solved[:1]), python, ROOMY, uid=unused_uid, workroot=shared_workroot
    )
    assert total == 1.0, details
    wait_until(lambda: _processes_of(unused_uid) == [], "the escaped child's end", timeout=60)


def example_of(case: dict) -> dict:
    """A case as the public example of score_level2 (instance, bytes, naive)."""
    return {"instance": case["instance"], "instance_bytes": case["instance_bytes"], "naive": case["naive"]}


def test_level2_exit_code_one_scores_fail(evaluate, solved, tmp_path):
    """A solve.py that exits 1 without an answer scores -1.0 with its return code recorded; its stderr is
    kept for the public example's run only."""
    program = write_program(tmp_path, "import sys\nsys.stderr.write('giving up\\n')\nsys.exit(1)\n")
    cases = make_cases(solved[:1])
    total, details, _ = run_level2(evaluate, tmp_path, program, cases, example=example_of(cases[0]))
    row = details["instances"][0]
    assert total == FAIL and row["reward"] == FAIL and details["feasible"] == 0
    assert row["returncode"] == 1 and row["timed_out"] is False
    assert "stderr_tail" not in row and "giving up" not in json.dumps(row)
    assert "giving up" in details["example"]["stderr_tail"]
    assert details["example"]["returncode"] == 1
    assert row["error"] == details["example"]["error"] == "solve.py exited with 1 and wrote no solution"


@pytest.mark.parametrize(
    "text, message, reason",
    [
        ("open(__import__('sys').argv[2], 'w').write('{')", r"^solution\.json is not valid JSON", "not json"),
        ("open(__import__('sys').argv[2], 'w').write('[NaN]')", r"^solution\.json: NaN is not allowed", "not json"),
        (
            "open(__import__('sys').argv[2], 'w').write('{\"starts\": []}')",
            r"^infeasible: solution\.starts: expected 4 items, got 0",
            "wrong shape",
        ),
        (
            "__import__('json').dump({'starts': [[0] * 4] * 4}, open(__import__('sys').argv[2], 'w'))",
            r"^infeasible: job 0 operation 1 starts at 0 before its predecessor ends",
            "infeasible",
        ),
        (
            "__import__('os').symlink('/dev/zero', __import__('sys').argv[2])",
            r"^solution\.json cannot be opened as a regular file",
            "unreadable",
        ),
        ("__import__('os').mkdir(__import__('sys').argv[2])", r"^solution\.json is not a regular file$", "unreadable"),
    ],
    ids=["invalid-json", "nan", "wrong-shape", "infeasible", "symlink-to-dev-zero", "directory"],
)
def test_level2_bad_output_scores_fail(evaluate, solved, tmp_path, text, message, reason):
    """solve.py output that is not a strict, feasible JSON file scores -1.0: a hidden run's row gives the
    fixed reason, the public example's run the full message."""
    program = write_program(tmp_path, text + "\n")
    cases = make_cases(solved[:1])
    total, details, _ = run_level2(evaluate, tmp_path, program, cases, example=example_of(cases[0]))
    row = details["instances"][0]
    assert total == FAIL and row["reward"] == FAIL and row["feasible"] == 0
    assert row["error"] == score.HIDDEN_REASONS[reason].format(max_bytes=score.safe_json.MAX_BYTES)
    assert re.search(message, details["example"]["error"]), details["example"]["error"]
    assert details["example"]["feasible"] == 0 and "reward" not in details["example"]


def test_level2_memory_limit(evaluate, solved, tmp_path):
    """Allocating 4 GB under memory_mb=512 fails at once with MemoryError and scores -1.0."""
    program = write_program(tmp_path, "buffer = bytearray(4 * 1024 ** 3)\n")
    cases = make_cases(solved[:1])
    total, details, _ = run_level2(
        evaluate, tmp_path, program, cases, Limits(solve_time_limit_s=60, memory_mb=512), example=example_of(cases[0])
    )
    row = details["instances"][0]
    assert total == FAIL and row["timed_out"] is False  # it failed by itself, long before its limit
    assert "MemoryError" in details["example"]["stderr_tail"]
    assert row["error"] == f"solve.py exited with {row['returncode']} and wrote no solution"


def test_level2_stdout_flood_is_capped(evaluate, solved, tmp_path):
    """Printing 200 MB with max_file_mb=1 is stopped by the file-size limit and scores -1.0 quickly."""
    program = write_program(
        tmp_path,
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(200):\n    sys.stdout.write(chunk)\nsys.stdout.flush()\n",
    )
    cases = make_cases(solved[:1])
    total, details, _ = run_level2(
        evaluate, tmp_path, program, cases, Limits(solve_time_limit_s=60, max_file_mb=1), example=example_of(cases[0])
    )
    row = details["instances"][0]
    assert total == FAIL and row["timed_out"] is False and row["returncode"] != 0  # stopped by the file limit
    assert "File too large" in details["example"]["stderr_tail"]


def test_level2_symlinked_program_scores_fail(evaluate, solved, tmp_path):
    """A solve.py that is a symlink (even to a correct program) scores -1.0 without running anything."""
    real = write_program(tmp_path, ROUND_ROBIN_PROGRAM, "real_solve.py")
    (tmp_path / "solve.py").symlink_to(real)
    total, details, _ = run_level2(evaluate, tmp_path, str(tmp_path / "solve.py"), make_cases(solved))
    assert total == FAIL
    assert details["instances"] == [] and details["feasible"] == 0
    assert "cannot be opened as a regular file" in details["error"]


def test_level2_missing_program_scores_fail(evaluate, solved, tmp_path):
    """No solve.py at all scores -1.0 with a 'does not exist' message."""
    total, details, _ = run_level2(evaluate, tmp_path, str(tmp_path / "solve.py"), make_cases(solved))
    assert total == FAIL
    assert "does not exist" in details["error"]


def test_level2_one_bad_instance_lowers_the_mean(evaluate, solved, tmp_path):
    """An answer missing for one instance scores -1.0 there and the mean includes it."""
    answers = {solved[0]["instance"]["name"]: solved[0]["reference_solution"]}  # none for instance 1
    program = write_program(tmp_path, lookup(answers))
    cases = make_cases(solved)
    total, details, _ = run_level2(evaluate, tmp_path, program, cases, example=example_of(cases[1]))
    assert [row["reward"] for row in details["instances"]] == [1.0, FAIL]
    assert total == pytest.approx((1.0 + FAIL) / 2)  # the example's run does not count
    assert details["feasible"] == 0
    assert details["instances"][1]["error"] == score.HIDDEN_REASONS["not json"]  # the lookup left it empty
    assert "KeyError" in details["example"]["stderr_tail"]


@pytest.mark.parametrize("uid", [0, os.geteuid()])
def test_a_run_never_takes_root_or_our_own_uid(tmp_path, uid):
    """Everything a run's uid owns in the shared folders is deleted afterwards: for root, the whole of /tmp."""
    from orharbor.verifiers.solver_run import run_program

    canary = tmp_path / "canary"
    canary.write_text("the user's file")
    with pytest.raises(ValueError, match="never runs as uid"):
        run_program(
            sys.executable, {"solve.py": b""}, ["solve.py"], "out.json", Limits(), uid=uid, open_dirs=(str(tmp_path),)
        )
    assert canary.read_text() == "the user's file"
