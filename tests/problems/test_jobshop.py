"""The jobshop problem class: Taillard's generator, the published files, verifier rules, baseline, reference.

The properties every class shares (contract, statement, golden digests, round trips, broken files,
baseline feasibility) are checked in tests/test_contract.py.
"""

from __future__ import annotations

import json
import random

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.jobshop.baseline import dispatch, round_robin
from orharbor.problem_modules.jobshop.generator import taillard
from orharbor.verifiers.reward import reward
from orharbor.verifiers.strict import Infeasible

from reference_meta import check_answer, check_proves
from text_edits import edit_line as _edit

js = problem_modules.get("jobshop")
TA01_SEEDS = (840612802, 398197754)
#: The published job shop files, under instances/ (the ``folder`` and ``published`` fixtures).
FOLDER = "jobshop"


@pytest.fixture(scope="module")
def ft06(folder) -> dict:
    return js.read(folder / "ft06")


# ----------------------------------------------------------------- generator


def test_taillard_reproduces_ta01(folder):
    ta01 = js.read(folder / "TA01.txt")
    assert (ta01["time_seed"], ta01["machine_seed"]) == TA01_SEEDS
    made = taillard(*TA01_SEEDS, 15, 15)
    assert made["durations"] == ta01["durations"]
    assert made["machines"] == ta01["machines"]
    assert made["machines"] == js.read(folder / "ta01")["machines"]


@pytest.mark.parametrize("size", js.SIZES)
def test_generate_shape(size):
    inst = js.generate(5, size)
    n, m = (int(x) for x in size.split("x"))
    assert (inst["n_jobs"], inst["n_machines"]) == (n, m)
    assert inst["name"] == f"jobshop-{size}-s5"
    gen = inst["generator"]
    assert (gen["seed"], gen["size"], gen["version"]) == (5, size, 1)
    assert len(inst["machines"]) == len(inst["durations"]) == n
    for route, times in zip(inst["machines"], inst["durations"]):
        assert sorted(route) == list(range(m))
        assert all(gen["low"] <= d <= gen["high"] for d in times)
    assert json.loads(json.dumps(inst)) == inst


def test_generator_draws_every_style():
    """Every duration range occurs across seeds, and the two-stage routing for about a quarter of them."""
    styles = {
        (js.generate(s, "6x6")["generator"]["high"], js.generate(s, "6x6")["generator"]["routing"]) for s in range(60)
    }
    assert {h for h, _ in styles} == {99, 200, 100}
    routings = [js.generate(s, "6x6")["generator"]["routing"] for s in range(200)]
    assert 0.15 < routings.count("two-stage") / 200 < 0.35


def test_two_stage_routing():
    seeds = [s for s in range(40) if js.generate(s, "10x10")["generator"]["routing"] == "two-stage"]
    assert seeds
    for s in seeds[:5]:
        for route in js.generate(s, "10x10")["machines"]:
            assert sorted(route[:5]) == [0, 1, 2, 3, 4]
            assert sorted(route[5:]) == [5, 6, 7, 8, 9]


# ------------------------------------------------------------------- formats


@pytest.mark.parametrize(("name", "fmt"), [("TA01.txt", "taillard"), ("ta01", "orlib"), ("ft06", "orlib")])
def test_real_files_round_trip_byte_for_byte(published, folder, name, fmt):
    text = published(name)
    for source in (folder / name, str(folder / name), text):
        inst = js.read(source)
        assert js.write(inst, fmt) == text
        assert js.read(source, fmt) == inst


def test_real_files_agree(folder):
    a, b = js.read(folder / "TA01.txt"), js.read(folder / "ta01")
    assert (a["machines"], a["durations"]) == (b["machines"], b["durations"])
    assert (a["upper_bound"], a["lower_bound"]) == (1231, 1005)
    assert a["source"] == "TA01.txt" and a["name"] == "TA01"
    ft = js.read(folder / "ft06")
    assert (ft["n_jobs"], ft["n_machines"]) == (6, 6)
    assert ft["machines"][0] == [2, 0, 1, 3, 5, 4] and ft["durations"][0] == [1, 3, 6, 7, 3, 6]
    assert ft["comments"][1] == " instance ft06"
    # cross-format: the data survive a trip through the other format
    assert js.read(js.write(a, "orlib"))["durations"] == a["durations"]
    assert js.read(js.write(ft, "taillard"))["machines"] == ft["machines"]


def test_taillard_files_keep_the_generator_seeds():
    """A generated instance written as a Taillard file carries its two seeds, as Taillard's own files do."""
    inst = js.generate(1, "15x15")
    text = js.write(inst, "taillard")
    back = js.read(text)
    assert text.startswith("Nb of jobs") and text.endswith("\n")
    assert (back["time_seed"], back["machine_seed"]) == (
        inst["generator"]["time_seed"],
        inst["generator"]["machine_seed"],
    )


def _ta01_row4_short(files) -> str:
    return _edit(files["ta01"], 4, " ".join(files["ta01"].split("\n")[3].split()[:-1]))


#: Edits of the published files (by name), the format to read them in, and the message expected.
BROKEN = [
    ("wrong count", _ta01_row4_short, "orlib", r"^<text>:4: expected 30 integers, got 29$"),
    (
        "non-integer",
        lambda f: _edit(f["ft06"], 7, "1  8  2  5  4 1O  5 10  0 10  3  4"),
        "orlib",
        r"^<text>:7: expected an integer, got '1O'$",
    ),
    (
        "float token",
        lambda f: _edit(f["ft06"], 7, "1  8  2  5  4 10.0  5 10  0 10  3  4"),
        "orlib",
        r"<text>:7: expected an integer, got '10\.0'",
    ),
    (
        "machine range",
        lambda f: _edit(f["ft06"], 6, "2  1  0  3  1  6  3  7  6  3  4  6"),
        "orlib",
        r"<text>:6: job 0 operation 4: machine 6 out of range 0\.\.5",
    ),
    (
        "machine repeated",
        lambda f: _edit(f["ft06"], 6, "2  1  0  3  1  6  3  7  3  3  4  6"),
        "orlib",
        r"<text>:6: job 0 operation 4: machine 3 repeated",
    ),
    (
        "negative duration",
        lambda f: _edit(f["ft06"], 6, "2  1  0 -3  1  6  3  7  5  3  4  6"),
        "orlib",
        r"<text>:6: job 0 operation 1: negative duration -3",
    ),
    (
        "missing row",
        lambda f: _edit(f["ft06"], 11, None),
        "orlib",
        r"<text>:11: expected the row of job 5 .*end of the file",
    ),
    ("only comments", lambda f: "# nothing\n", None, r"<text>:2: expected the line 'n_jobs n_machines'"),
    ("bad size line", lambda f: _edit(f["ft06"], 5, "6"), "orlib", r"<text>:5: expected 2 integers, got 1"),
    ("zero jobs", lambda f: "0 6\n", "orlib", r"<text>:1: expected positive numbers"),
    (
        "taillard count",
        lambda f: _edit(f["TA01.txt"], 5, " 74 31 88 51 57 78  8  7 91 79 18 51 18 99"),
        "taillard",
        r"^<text>:5: expected 15 integers, got 14$",
    ),
    (
        "taillard machine 0",
        lambda f: _edit(f["TA01.txt"], 20, "  0 13  5  8  4  3 11 12  9 15 10 14  6  1  2"),
        "taillard",
        r"<text>:20: job 0 operation 0: machine 0 out of range 1\.\.15",
    ),
    (
        "taillard repeated",
        lambda f: _edit(f["TA01.txt"], 20, "  7  7  5  8  4  3 11 12  9 15 10 14  6  1  2"),
        "taillard",
        r"<text>:20: job 0 operation 1: machine 7 repeated",
    ),
    (
        "taillard missing row",
        lambda f: _edit(f["TA01.txt"], 18, None),
        None,
        r"<text>:18: expected an integer, got 'Machines'",
    ),
    (
        "taillard truncated",
        lambda f: "\n".join(f["TA01.txt"].split("\n")[:30]),
        None,
        r"<text>:31: expected the machines of job 11 \(15 integers\), got the end of the file$",
    ),
    ("taillard no Times", lambda f: _edit(f["TA01.txt"], 3, "Time"), None, r"<text>:3: expected 'Times', got 'Time'"),
    ("taillard header", lambda f: f["TA01.txt"], "taillard", None),
]


@pytest.fixture(scope="module")
def files(published) -> dict[str, str]:
    """The text of the published files the broken-file cases edit."""
    return {name: published(name) for name in ("ta01", "ft06", "TA01.txt")}


@pytest.mark.parametrize(("label", "make", "fmt", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_are_rejected(files, label, make, fmt, message):
    text = make(files)
    if message is None:  # control: the unedited file reads
        assert js.read(text, fmt)["n_jobs"] == 15
        with pytest.raises(ValueError, match=r"<text>:1: expected the header"):
            js.read(text.replace("Nb of jobs", "Jobs"), "taillard")
        return
    with pytest.raises(ValueError, match=message):
        js.read(text, fmt)


# ------------------------------------------------------------------ verifier


def test_evaluate_known_schedules(ft06):
    inst = js.generate(0, "4x4")
    rr = dispatch(inst, [j for _ in range(4) for j in range(4)])
    assert js.evaluate(inst, rr) == max(s + d for r, t in zip(rr["starts"], inst["durations"]) for s, d in zip(r, t))
    # job after job (each appended to the machines' ends): feasible, between the bounds
    serial = dispatch(ft06, [j for j in range(6) for _ in range(6)])
    assert max(map(sum, ft06["durations"])) <= js.evaluate(ft06, serial) <= sum(map(sum, ft06["durations"]))
    assert js.evaluate(ft06, serial) == 152


def _small() -> dict:
    # job 0: m0 (3) then m1 (2); job 1: m1 (4) then m0 (1)
    return {
        "problem": "jobshop",
        "name": "t",
        "n_jobs": 2,
        "n_machines": 2,
        "machines": [[0, 1], [1, 0]],
        "durations": [[3, 2], [4, 1]],
    }


def test_evaluate_small_exact():
    inst = _small()
    assert js.evaluate(inst, {"starts": [[0, 4], [0, 4]]}) == 6
    assert js.evaluate(inst, {"starts": [[1, 10], [0, 4]]}) == 12
    # touching intervals are fine; zero-length operations occupy no time
    zero = dict(inst, durations=[[3, 0], [4, 1]])
    assert js.evaluate(zero, {"starts": [[0, 3], [0, 4]]}) == 5


GOOD = [[0, 4], [0, 4]]
BROKEN_SOLUTIONS = [
    ("not a dict", [[0, 4], [0, 4]], r"^solution: expected a JSON object, got list$"),
    ("null", None, r"^solution: expected a JSON object, got null$"),
    ("missing key", {}, r"^solution: missing key 'starts'$"),
    ("extra key", {"starts": GOOD, "makespan": 6}, r"^solution: unexpected key 'makespan'"),
    ("starts not list", {"starts": {"0": [0, 4]}}, r"^solution\.starts: expected a list, got object$"),
    ("too few jobs", {"starts": [[0, 4]]}, r"^solution\.starts: expected 2 items, got 1$"),
    ("too many jobs", {"starts": GOOD + [[0, 0]]}, r"^solution\.starts: expected 2 items, got 3$"),
    ("row not list", {"starts": [[0, 4], "0 4"]}, r"^solution\.starts\[1\]: expected a list, got string$"),
    ("short row", {"starts": [[0, 4], [0]]}, r"^solution\.starts\[1\]: expected 2 items, got 1$"),
    ("bool", {"starts": [[0, 4], [False, 4]]}, r"^solution\.starts\[1\]\[0\]: expected an integer, got bool"),
    ("float", {"starts": [[0, 4], [0, 3.0]]}, r"^solution\.starts\[1\]\[1\]: expected an integer, got float 3\.0$"),
    (
        "nan",
        {"starts": [[float("nan"), 4], [0, 4]]},
        r"^solution\.starts\[0\]\[0\]: expected an integer, got float nan$",
    ),
    (
        "inf",
        {"starts": [[0, float("inf")], [0, 4]]},
        r"^solution\.starts\[0\]\[1\]: expected an integer, got float inf$",
    ),
    ("huge", {"starts": [[0, 10**30], [0, 4]]}, r"^solution\.starts\[0\]\[1\]: integer .* is out of range$"),
    ("negative", {"starts": [[0, 4], [-1, 4]]}, r"^solution\.starts\[1\]\[0\]: -1 is below the minimum 0$"),
    ("string", {"starts": [[0, "4"], [0, 4]]}, r"^solution\.starts\[0\]\[1\]: expected an integer, got string '4'$"),
    ("null start", {"starts": [[0, 4], [0, None]]}, r"^solution\.starts\[1\]\[1\]: expected an integer, got null"),
    (
        "nested junk",
        {"starts": [[0, [4]], [0, 4]]},
        r"^solution\.starts\[0\]\[1\]: expected an integer, got list \[4\]$",
    ),
    (
        "dict start",
        {"starts": [[0, 4], [{"t": 0}, 4]]},
        r"^solution\.starts\[1\]\[0\]: expected an integer, got object",
    ),
    ("precedence", {"starts": [[0, 2], [0, 4]]}, r"^job 0 operation 1 starts at 2 before its predecessor ends at 3$"),
    (
        "overlap",
        {"starts": [[0, 3], [0, 5]]},
        r"^machine 1: job 1 operation 0 \[0, 4\) overlaps job 0 operation 1 \[3, 5\)$",
    ),
    ("overlap m0", {"starts": [[0, 4], [0, 2]]}, r"^job 1 operation 1 starts at 2 before its predecessor ends at 4$"),
    (
        "same start",
        {"starts": [[5, 10], [0, 5]]},
        r"^machine 0: job 1 operation 1 \[5, 6\) overlaps job 0 operation 0 \[5, 8\)$",
    ),
]


@pytest.mark.parametrize(("label", "solution", "message"), BROKEN_SOLUTIONS, ids=[b[0] for b in BROKEN_SOLUTIONS])
def test_evaluate_rejects(label, solution, message):
    with pytest.raises(Infeasible, match=message):
        js.evaluate(_small(), solution)


def test_evaluate_fuzz_never_crashes_unexpectedly():
    inst = js.generate(1, "6x6")
    good = js.baseline(inst)
    rng = random.Random(0)
    junk = [None, True, -1, 1.5, "x", [], {}, [[]], 10**20, float("nan")]
    for _ in range(300):
        sol = json.loads(json.dumps(good))
        j, k = rng.randrange(6), rng.randrange(6)
        choice = rng.randrange(3)
        if choice == 0:
            sol["starts"][j][k] = rng.choice(junk)
        elif choice == 1:
            sol["starts"][j][k] = max(0, sol["starts"][j][k] + rng.randint(-50, 50))
        else:
            sol["starts"][j] = rng.choice(junk)
        try:
            assert js.evaluate(inst, sol) >= 0
        except Infeasible:
            pass


# ------------------------------------------------------------------ baseline


def test_dispatch_validates_sequence():
    inst = _small()
    with pytest.raises(ValueError, match="4 entries"):
        dispatch(inst, [0, 1, 0])
    with pytest.raises(ValueError, match="more than 2 times"):
        dispatch(inst, [0, 0, 0, 1])


@pytest.fixture(scope="module")
def references() -> dict:
    """CP-SAT references (short runs, cut off by their limit) for the random-sequence test, computed once."""
    out = {}
    for size, seed in (("10x10", 1), ("10x10", 2), ("15x15", 1), ("15x15", 2)):
        inst = js.generate(seed, size)
        out[(size, seed)] = (inst, *js.reference(inst, time_limit_s=2.0, workers=2))
    return out


def _start(inst: dict) -> int:
    """The makespan of the reference's start, the round-robin dispatch hint: no reference is worse."""
    return js.evaluate(inst, dispatch(inst, round_robin(inst)))


@pytest.mark.slow
@pytest.mark.parametrize("size", ["10x10", "15x15"])
def test_random_sequences_average_zero_reward(references, size):
    """100 random dispatch sequences average a reward within 0.15 of 0.

    The reward's scale, naive - reference, depends on how far CP-SAT got before its limit, so
    the rewards are taken against the reference's start instead: every reference is at least
    as good, and a better reference only brings the mean closer to 0, so this holds for
    whatever reference any machine finds.
    """
    for (sz, seed), (inst, _, meta) in references.items():
        if sz != size:
            continue
        n, m = inst["n_jobs"], inst["n_machines"]
        naive = js.evaluate(inst, js.baseline(inst))
        start = _start(inst)
        assert naive > start >= meta["objective"], (size, seed)
        rewards = []
        for k in range(100):
            seq = [j for j in range(n) for _ in range(m)]
            random.Random(k).shuffle(seq)
            rewards.append(reward(js.evaluate(inst, dispatch(inst, seq)), naive, start))
        mean = sum(rewards) / len(rewards)
        assert abs(mean) < 0.15, (size, seed, mean)


# ----------------------------------------------------------------- reference


def test_reference_proves_the_optimum_of_ft06(ft06):
    """CP-SAT proves 55 on ft06 (in milliseconds; the limit leaves ample slack).

    The proof is asserted when CP-SAT reports it; cut off by its limit (a machine loaded past
    all reason), the answer is still feasible, its bound below 55 and its makespan above.
    """
    check_proves(js, ft06, 55)


def test_reference_beats_baseline(references):
    """At any limit: feasible, as its meta says, between its bound and its start (better than naive)."""
    for inst, sol, meta in references.values():
        objective = check_answer(js, inst, sol, meta)
        assert meta["bound"] <= objective <= _start(inst) < js.evaluate(inst, js.baseline(inst))


def test_reference_falls_back_when_out_of_time():
    inst = js.generate(0, "100x20")
    sol, meta = js.reference(inst, time_limit_s=0.001, workers=1)
    check_answer(js, inst, sol, meta)
