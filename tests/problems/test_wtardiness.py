"""The wtardiness problem module: generator, formats, verifier, baseline, reference."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from orharbor.jsonio import digest
from orharbor.problem_modules import wtardiness as wt
from orharbor.verifiers.reward import reward
from orharbor.verifiers.strict import Infeasible

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "instances" / "wtardiness"
DATA_KEYS = ("n_jobs", "processing_times", "weights", "due_dates")


def fixture_text(name: str) -> str:
    with open(FIXTURES / name, encoding="utf-8", newline="") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def wt40() -> list[dict]:
    return wt.read_all(FIXTURES / "wt40.txt")


# ------------------------------------------------------------------ contract


def test_contract_names():
    """The module exports the contract names with the issue's values."""
    assert wt.NAME == "wtardiness" and wt.TITLE == "Single-machine total weighted tardiness"
    assert wt.OBJECTIVE == "total weighted tardiness" and wt.FORMATS == ("orlib",)
    assert wt.SIZES == ("n8", "n40", "n50", "n100", "n200", "n500", "n1000")
    assert wt.GENERATOR_VERSION == 1
    assert isinstance(wt.BASELINE, str) and len(wt.BASELINE) > 100
    for name in ("generate", "read", "read_all", "read_optima", "write", "evaluate", "baseline", "reference", "statement"):
        assert callable(getattr(wt, name)), name


def test_statement():
    """The statement names the fields, the rules, the objective and the generator."""
    text = wt.statement()
    assert text.startswith("# Single-machine total weighted tardiness")
    for word in ("n_jobs", "processing_times", "weights", "due_dates", "sequence", "TF", "RDD", "How instances are generated"):
        assert word in text
    assert 40 <= len(text.splitlines()) <= 80


# ----------------------------------------------------------------- generator


@pytest.mark.parametrize(
    ("seed", "size", "expected"),
    [
        (0, "n8", "b155ffa6daca77d6799f2d37f92570e85b7e26888e7ff58a875b226d638e3d6b"),
        (7, "n100", "e54f74340a991dc922f7ecbd1aa596fb64b6140da7e266c2dd7cc1bcc5998571"),
        (123456789, "n1000", "c03495c8cdfe28d8e0352fd5e4d78d3ebd1c466cab538cf05d6194564bdb913b"),
    ],
)
def test_generate_golden_hashes(seed, size, expected):
    """generate is pinned byte for byte."""
    assert digest(wt.generate(seed, size)) == expected


@pytest.mark.parametrize("size", wt.SIZES)
def test_generate_follows_the_design(size):
    """Values lie in the OR-Library ranges and the due dates in the recorded TF/RDD window."""
    inst = wt.generate(5, size)
    n = int(size[1:])
    gen = inst["generator"]
    assert inst["name"] == f"wtardiness-{size}-s5" and inst["n_jobs"] == n
    assert (gen["seed"], gen["size"], gen["version"]) == (5, size, 1)
    assert all(1 <= p <= 100 for p in inst["processing_times"]) and len(inst["processing_times"]) == n
    assert all(1 <= w <= 10 for w in inst["weights"]) and len(inst["weights"]) == n
    total = sum(inst["processing_times"])
    assert gen["P"] == total and gen["TF"] in wt.generator.FACTORS and gen["RDD"] in wt.generator.FACTORS
    low = max(0.0, total * (1 - gen["TF"] - gen["RDD"] / 2))
    high = total * (1 - gen["TF"] + gen["RDD"] / 2)
    assert low - 1e-6 <= gen["due_date_low"] <= gen["due_date_high"] <= high + 1e-6
    assert all(gen["due_date_low"] <= d <= gen["due_date_high"] for d in inst["due_dates"])
    assert json.loads(json.dumps(inst)) == inst


def test_due_date_range_is_exact():
    """The window is computed in integers: ceil/floor of P(10 - 2t -+ r)/10, clamped at 0."""
    assert wt.due_date_range(1000, 1, 1) == (700, 900)  # TF 0.2, RDD 0.2
    assert wt.due_date_range(1001, 1, 1) == (701, 900)
    assert wt.due_date_range(1000, 5, 5) == (0, 500)  # negative lower end clamped
    assert wt.due_date_range(8, 5, 1) == (0, 0)


def test_generate_is_deterministic_and_varies():
    """Same (seed, size) gives the same instance; all 25 (TF, RDD) pairs occur."""
    assert wt.generate(3, "n40") == wt.generate(3, "n40")
    assert wt.generate(3, "n40")["processing_times"] != wt.generate(4, "n40")["processing_times"]
    pairs = {(g["TF"], g["RDD"]) for g in (wt.generate(s, "n8")["generator"] for s in range(300))}
    assert len(pairs) == 25


@pytest.mark.parametrize(("seed", "size"), [(0, "n7"), (0, "N40"), (0, 40), (-1, "n8"), (True, "n8"), (1.0, "n8"), ("1", "n8"), (2**64, "n8")])
def test_generate_rejects_bad_arguments(seed, size):
    """Unknown sizes and bad seeds raise ValueError listing the valid sizes."""
    with pytest.raises(ValueError, match="valid sizes: n8, n40, n50"):
        wt.generate(seed, size)


# ------------------------------------------------------------------- formats


def test_wt40_round_trips_byte_for_byte(wt40):
    """write(read_all(wt40.txt)) reproduces the published file exactly, from a path, a string path or text."""
    text = fixture_text("wt40.txt")
    assert len(wt40) == 125 and all(inst["n_jobs"] == 40 for inst in wt40)
    assert wt.write(wt40) == text
    assert wt.read(str(FIXTURES / "wt40.txt")) == wt40  # index=None on a multi-instance file: the list
    assert wt.write(wt.read_all(text, n=40)) == text
    # the only departures from the canonical layout: one line, and the file's end
    assert [i for i, inst in enumerate(wt40) if "layout" in inst] == [62, 124]
    assert wt40[124]["layout"]["tail"] == "\n\n"


def test_wt40_instances_and_optima(wt40):
    """Instance 1 reads as published; index picks one instance; wtopt40 holds 125 optima."""
    first = wt.read(FIXTURES / "wt40.txt", index=0)
    assert first == wt40[0] and first["name"] == "wt40-1" and first["source"] == "wt40.txt"
    assert first["processing_times"][:3] == [26, 24, 79] and first["weights"][:2] == [1, 10]
    assert first["due_dates"][0] == 1588 and first["due_dates"][-1] == 1814
    assert wt.read(FIXTURES / "wt40.txt", index=2)["name"] == "wt40-3"
    assert wt40[62]["weights"][0] == 10
    optima = wt.read_optima(FIXTURES / "wtopt40.txt")
    assert len(optima) == 125 and optima[0] == 913 and optima[2] == 537 and optima[18] == 77122
    with pytest.raises(ValueError, match="index 125 out of range: the file holds 125 instances"):
        wt.read(FIXTURES / "wt40.txt", index=125)


def test_single_instances_round_trip(wt40):
    """An instance picked from wt40 writes as its own block and reads back identically."""
    for k in (0, 62, 124):
        text = wt.write(wt40[k])
        back = wt.read(text, "orlib")
        assert {key: back[key] for key in DATA_KEYS} == {key: wt40[k][key] for key in DATA_KEYS}
        assert wt.write(back) == text
    assert len(wt.write(wt40[0]).split("\n")) == 7  # 6 lines of 20, final newline


@pytest.mark.parametrize(("seed", "size"), [(0, "n8"), (1, "n50"), (2, "n1000")])
def test_generated_round_trip(seed, size):
    """read(write(x)) gives back x's data, as a single dict, and writes the same text."""
    inst = wt.generate(seed, size)
    text = wt.write(inst, "orlib")
    back = wt.read(text, "orlib")
    assert isinstance(back, dict) and "layout" not in back
    assert {k: back[k] for k in DATA_KEYS} == {k: inst[k] for k in DATA_KEYS}
    assert wt.write(back) == text and text.endswith("\n")
    assert max(len(line.split()) for line in text.splitlines()) <= 20


def test_write_many_and_read_with_n():
    """Several generated instances make one file; read needs n for a nameless multi-instance text."""
    insts = [wt.generate(s, "n50") for s in range(3)]
    text = wt.write(insts)
    back = wt.read(text, n=50)
    assert isinstance(back, list) and [b["due_dates"] for b in back] == [i["due_dates"] for i in insts]
    assert wt.write(back) == text
    assert wt.read(text)["n_jobs"] == 150  # without n, the whole text is one instance


def test_wide_values_stay_separated():
    """Six-digit values widen the columns so that tokens never run together."""
    inst = {"problem": "wtardiness", "name": "t", "n_jobs": 2, "processing_times": [1, 2], "weights": [3, 4], "due_dates": [123456, 7]}
    text = wt.write(inst)
    assert text.split("\n")[2] == " 123456      7"
    assert wt.read(text)["due_dates"] == [123456, 7]


def _edit(lineno: int, new: str | None) -> str:
    lines = fixture_text("wt40.txt").split("\n")[:6]  # instance 1 only
    if new is None:
        del lines[lineno - 1]
    else:
        lines[lineno - 1] = new
    return "\n".join(lines) + "\n"


ROW1 = fixture_text("wt40.txt").split("\n")[0]
BROKEN = [
    ("non-integer", lambda: _edit(3, ROW1.replace("26", "2G", 1)), None, r"^<text>:3: expected an integer, got '2G'$"),
    ("float token", lambda: _edit(2, ROW1.replace("26", "2.5", 1)), None, r"^<text>:2: expected an integer, got '2\.5'$"),
    ("negative weight", lambda: _edit(3, ROW1.replace("26", "-6", 1)), 40, r"^<text>:3: instance 1 job 0: negative weight -6$"),
    ("negative due date", lambda: _edit(6, ROW1.replace("24", "-4", 1)), 40, r"^<text>:6: instance 1 job 21: negative due date -4$"),
    ("missing line", lambda: _edit(6, None), 40, r"^<text>:6: expected the 40 due dates of instance 1, got the end of the file after 20$"),
    ("missing token", lambda: _edit(1, ROW1[6:]), 40, r"^<text>:7: expected the 40 due dates of instance 1, got the end of the file after 39$"),
    ("extra line", lambda: _edit(6, None) + ROW1 + "\n" + ROW1 + "\n", 40, r"^<text>:8: expected the 40 processing times of instance 2, got the end of the file after 20$"),
    ("not 3n", lambda: _edit(1, ROW1[6:]), None, r"^<text>: 119 integers do not make one instance \(3 n integers\); pass n="),
    ("empty", lambda: "", 40, r"^<text>:1: expected the 40 processing times of instance 1, got the end of the file$"),
    ("blank", lambda: "\n  \n", None, r"^<text>: 0 integers do not make one instance"),
]


@pytest.mark.parametrize(("label", "make", "n", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_are_rejected(label, make, n, message):
    """Each defect raises ValueError with file:line and what was expected."""
    with pytest.raises(ValueError, match=message):
        wt.read(make(), n=n)


def test_broken_file_message_names_the_file(tmp_path):
    """Messages name the file; its wt<n> name gives n; bad arguments are rejected."""
    path = tmp_path / "wt40.txt"
    path.write_text(_edit(6, None), encoding="utf-8")
    with pytest.raises(ValueError, match=r"^wt40\.txt:6: expected the 40 due dates of instance 1"):
        wt.read(path)
    good = tmp_path / "wt40b.txt"
    good.write_text(_edit(1, ROW1), encoding="utf-8")
    assert wt.read(good, n=40)["name"] == "wt40b-1"
    with pytest.raises(ValueError, match="unknown wtardiness format"):
        wt.read(good, "json")
    with pytest.raises(ValueError, match="n \\(jobs per instance\\) must be a positive integer"):
        wt.read(good, n=0)
    opt = tmp_path / "wtopt40.txt"
    opt.write_text(" 913\n 12x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^wtopt40\.txt:2: expected one integer, got '12x'$"):
        wt.read_optima(opt)


# ------------------------------------------------------------------ verifier


def _small() -> dict:
    return {"problem": "wtardiness", "name": "t", "n_jobs": 3, "processing_times": [3, 2, 4], "weights": [2, 5, 1], "due_dates": [4, 2, 5]}


def test_evaluate_small_exact():
    """Hand-computed objectives: C and max(0, C - d) weighted."""
    inst = _small()
    assert wt.evaluate(inst, {"sequence": [0, 1, 2]}) == 2 * 0 + 5 * 3 + 1 * 4  # C = 3, 5, 9
    assert wt.evaluate(inst, {"sequence": [1, 0, 2]}) == 0 + 2 * 1 + 1 * 4  # C = 2, 5, 9
    assert wt.evaluate(inst, {"sequence": [2, 1, 0]}) == 0 + 5 * 4 + 2 * 5  # C = 4, 6, 9


def test_evaluate_wt40_first_instance(wt40):
    """On wt40 instance 1 the verifier agrees with the plain formula, and EDD scores 1588."""
    inst = wt40[0]
    assert wt.evaluate(inst, {"sequence": list(range(40))}) == wt.weighted_tardiness(inst, list(range(40)))
    assert wt.evaluate(inst, {"sequence": wt.edd(inst)}) == 1588


GOOD = [1, 0, 2]
BROKEN_SOLUTIONS = [
    ("not a dict", GOOD, r"^solution: expected a JSON object, got list$"),
    ("null", None, r"^solution: expected a JSON object, got null$"),
    ("missing key", {}, r"^solution: missing key 'sequence'$"),
    ("extra key", {"sequence": GOOD, "objective": 6}, r"^solution: unexpected key 'objective'"),
    ("sequence not list", {"sequence": {"0": 1}}, r"^solution\.sequence: expected a list, got object$"),
    ("string sequence", {"sequence": "1 0 2"}, r"^solution\.sequence: expected a list, got string$"),
    ("too short", {"sequence": [1, 0]}, r"^solution\.sequence: expected 3 items, got 2$"),
    ("too long", {"sequence": [1, 0, 2, 2]}, r"^solution\.sequence: expected 3 items, got 4$"),
    ("bool", {"sequence": [1, False, 2]}, r"^solution\.sequence\[1\]: expected an integer, got bool"),
    ("float", {"sequence": [1, 0, 2.0]}, r"^solution\.sequence\[2\]: expected an integer, got float 2\.0$"),
    ("nan", {"sequence": [float("nan"), 0, 2]}, r"^solution\.sequence\[0\]: expected an integer, got float nan$"),
    ("inf", {"sequence": [1, float("inf"), 2]}, r"^solution\.sequence\[1\]: expected an integer, got float inf$"),
    ("huge", {"sequence": [1, 10**30, 2]}, r"^solution\.sequence\[1\]: integer .* is out of range$"),
    ("negative", {"sequence": [1, -1, 2]}, r"^solution\.sequence\[1\]: -1 is below the minimum 0$"),
    ("too big", {"sequence": [1, 3, 2]}, r"^solution\.sequence\[1\]: 3 is above the maximum 2$"),
    ("string", {"sequence": [1, "0", 2]}, r"^solution\.sequence\[1\]: expected an integer, got string '0'$"),
    ("null job", {"sequence": [1, 0, None]}, r"^solution\.sequence\[2\]: expected an integer, got null"),
    ("nested", {"sequence": [[1], 0, 2]}, r"^solution\.sequence\[0\]: expected an integer, got list \[1\]$"),
    ("duplicate", {"sequence": [1, 0, 1]}, r"^solution\.sequence\[2\]: job 1 is already at position 0 \(every job exactly once; job 2 is missing\)$"),
    ("all same", {"sequence": [2, 2, 2]}, r"^solution\.sequence\[1\]: job 2 is already at position 0 \(every job exactly once; job 0 is missing\)$"),
]


@pytest.mark.parametrize(("label", "solution", "message"), BROKEN_SOLUTIONS, ids=[b[0] for b in BROKEN_SOLUTIONS])
def test_evaluate_rejects(label, solution, message):
    """Every malformed or infeasible answer raises Infeasible naming the place."""
    with pytest.raises(Infeasible, match=message):
        wt.evaluate(_small(), solution)


def test_evaluate_fuzz_never_crashes_unexpectedly():
    """Random corruptions of a good answer give an objective or Infeasible, nothing else."""
    inst = wt.generate(1, "n40")
    good = wt.baseline(inst)
    rng = random.Random(0)
    junk = [None, True, -1, 1.5, "x", [], {}, [[]], 10**20, float("nan"), 40]
    for _ in range(300):
        sol = json.loads(json.dumps(good))
        k = rng.randrange(40)
        choice = rng.randrange(3)
        if choice == 0:
            sol["sequence"][k] = rng.choice(junk)
        elif choice == 1:
            sol["sequence"][k] = rng.randrange(40)
        else:
            sol["sequence"] = rng.choice(junk)
        try:
            assert wt.evaluate(inst, sol) >= 0
        except Infeasible:
            pass


# ------------------------------------------------------------------ baseline


@pytest.mark.parametrize("size", wt.SIZES)
def test_baseline_is_feasible_and_deterministic(size):
    """The baseline is a permutation, the same every time."""
    inst = wt.generate(11, size)
    sol = wt.baseline(inst)
    assert sol == wt.baseline(json.loads(json.dumps(inst)))
    assert sorted(sol["sequence"]) == list(range(inst["n_jobs"]))
    assert wt.evaluate(inst, sol) >= 0


@pytest.fixture(scope="module")
def references() -> dict:
    """CP-SAT references (short runs) for two n40 instances, computed once."""
    out = {}
    for seed in (0, 3):
        inst = wt.generate(seed, "n40")
        out[seed] = (inst, *wt.reference(inst, time_limit_s=1.5, workers=2))
    return out


@pytest.mark.slow
def test_random_sequences_average_zero_reward(references):
    """100 random permutations average a reward within 0.15 of 0 against the baseline."""
    for seed, (inst, _, meta) in references.items():
        naive = wt.evaluate(inst, wt.baseline(inst))
        assert naive > meta["objective"]
        rewards = []
        for k in range(100):
            seq = list(range(inst["n_jobs"]))
            random.Random(k).shuffle(seq)
            rewards.append(reward(wt.evaluate(inst, {"sequence": seq}), naive, meta["objective"]))
        mean = sum(rewards) / len(rewards)
        assert abs(mean) < 0.15, (seed, mean)


# ----------------------------------------------------------------- reference


@pytest.mark.slow
def test_reference_solves_wt40_instance_1(wt40):
    """CP-SAT reaches the published optimum 913 of wt40 instance 1 (found within 1 s; proof not asserted)."""
    sol, meta = wt.reference(wt40[0], time_limit_s=4.0, workers=2, seed=0)
    assert wt.evaluate(wt40[0], sol) == meta["objective"] == 913
    assert meta["status"] in ("OPTIMAL", "FEASIBLE") and 0 <= meta["bound"] <= 913
    assert meta["solver"] == "ortools-cp-sat" and meta["version"]
    assert (meta["time_limit_s"], meta["workers"], meta["seed"]) == (4.0, 2, 0)
    assert isinstance(meta["wall_time_s"], float)
    json.dumps(meta)


def test_reference_beats_baseline(references):
    """The reference is feasible, matches its meta, and is no worse than the baseline or the rules."""
    for inst, sol, meta in references.values():
        objective = wt.evaluate(inst, sol)
        assert objective == meta["objective"]
        assert meta["status"] in ("OPTIMAL", "FEASIBLE")
        assert meta["bound"] <= objective <= wt.weighted_tardiness(inst, wt.best_rule(inst))
        assert objective < wt.evaluate(inst, wt.baseline(inst))


def test_reward_with_zero_reference():
    """Loose due dates: a reference of 0, and a naive equal to the reference, are scored sanely."""
    inst = wt.generate(2, "n8")
    sol, meta = wt.reference(inst, time_limit_s=2.0, workers=2)
    naive = wt.evaluate(inst, wt.baseline(inst))
    assert meta["objective"] == 0 == wt.evaluate(inst, sol) and meta["status"] == "OPTIMAL" and naive > 0
    assert reward(0, naive, 0) == 1.0 and reward(naive, naive, 0) == 0.0
    loose = dict(inst, due_dates=[sum(inst["processing_times"])] * inst["n_jobs"])
    sol, meta = wt.reference(loose, time_limit_s=2.0, workers=2)
    naive = wt.evaluate(loose, wt.baseline(loose))
    assert naive == meta["objective"] == 0
    assert reward(0, naive, meta["objective"]) == 1.0 and reward(1, naive, meta["objective"]) == -1.0


def test_reference_falls_back_when_out_of_time():
    """At a tiny limit on n1000 the answer is still feasible and no worse than the best rule."""
    inst = wt.generate(0, "n1000")
    sol, meta = wt.reference(inst, time_limit_s=0.001, workers=1)
    assert wt.evaluate(inst, sol) == meta["objective"] <= wt.weighted_tardiness(inst, wt.best_rule(inst))
    assert meta["status"] in ("OPTIMAL", "FEASIBLE", "FEASIBLE_HINT") and meta["bound"] <= meta["objective"]
