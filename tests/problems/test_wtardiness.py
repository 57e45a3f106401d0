"""The wtardiness problem class: the OR-Library design and files, verifier rules, baseline, reference.

The properties every class shares (contract, statement, golden digests, round trips, broken files,
baseline feasibility) are checked in tests/test_contract.py.
"""

from __future__ import annotations

import json
import random

import pytest

from orharbor import problem_modules
from orharbor.problem_modules.wtardiness.formats import read_all, read_optima
from orharbor.problem_modules.wtardiness.generator import FACTORS, due_date_range
from orharbor.problem_modules.wtardiness.reference import best_rule, edd
from orharbor.problem_modules.wtardiness.verify import weighted_tardiness
from orharbor.verifiers.reward import reward
from orharbor.verifiers.strict import Infeasible

from reference_meta import check_answer, check_proves
from text_edits import edit_line

wt = problem_modules.get("wtardiness")
DATA_KEYS = ("n_jobs", "processing_times", "weights", "due_dates")
#: The published OR-Library wt files, under instances/ (the ``folder`` and ``published`` fixtures).
FOLDER = "wtardiness"


@pytest.fixture(scope="module")
def wt40(folder) -> list[dict]:
    return read_all(folder / "wt40.txt")


def test_statement_names_the_design_parameters():
    """Beyond the fields: the tardiness factor and due-date range of the generator."""
    text = wt.statement()
    for word in ("TF", "RDD", "sequence"):
        assert word in text, word


# ----------------------------------------------------------------- generator


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
    assert gen["P"] == total and gen["TF"] in FACTORS and gen["RDD"] in FACTORS
    low = max(0.0, total * (1 - gen["TF"] - gen["RDD"] / 2))
    high = total * (1 - gen["TF"] + gen["RDD"] / 2)
    assert low - 1e-6 <= gen["due_date_low"] <= gen["due_date_high"] <= high + 1e-6
    assert all(gen["due_date_low"] <= d <= gen["due_date_high"] for d in inst["due_dates"])


def test_due_date_range_is_exact():
    """The window is computed in integers: ceil/floor of P(10 - 2t -+ r)/10, clamped at 0."""
    assert due_date_range(1000, 1, 1) == (700, 900)  # TF 0.2, RDD 0.2
    assert due_date_range(1001, 1, 1) == (701, 900)
    assert due_date_range(1000, 5, 5) == (0, 500)  # negative lower end clamped
    assert due_date_range(8, 5, 1) == (0, 0)


def test_all_tf_rdd_pairs_occur():
    """Across seeds the generator draws all 25 (TF, RDD) pairs."""
    pairs = {(g["TF"], g["RDD"]) for g in (wt.generate(s, "n8")["generator"] for s in range(300))}
    assert len(pairs) == 25


# ------------------------------------------------------------------- formats


def test_wt40_round_trips_byte_for_byte(published, folder, wt40):
    """write(read_all(wt40.txt)) reproduces the published file exactly, from a path, a string path or text."""
    text = published("wt40.txt")
    assert len(wt40) == 125 and all(inst["n_jobs"] == 40 for inst in wt40)
    assert wt.write(wt40) == text
    assert wt.read(str(folder / "wt40.txt")) == wt40  # index=None on a multi-instance file: the list
    assert wt.write(read_all(text, n=40)) == text
    # the only departures from the canonical layout: one line, and the file's end
    assert [i for i, inst in enumerate(wt40) if "layout" in inst] == [62, 124]
    assert wt40[124]["layout"]["tail"] == "\n\n"


def test_wt40_instances_and_optima(folder, wt40):
    """Instance 1 reads as published; index picks one instance; wtopt40 holds 125 optima."""
    first = wt.read(folder / "wt40.txt", index=0)
    assert first == wt40[0] and first["name"] == "wt40-1" and first["source"] == "wt40.txt"
    assert first["processing_times"][:3] == [26, 24, 79] and first["weights"][:2] == [1, 10]
    assert first["due_dates"][0] == 1588 and first["due_dates"][-1] == 1814
    assert wt.read(folder / "wt40.txt", index=2)["name"] == "wt40-3"
    assert wt40[62]["weights"][0] == 10
    optima = read_optima(folder / "wtopt40.txt")
    assert len(optima) == 125 and optima[0] == 913 and optima[2] == 537 and optima[18] == 77122
    with pytest.raises(ValueError, match="index 125 out of range: the file holds 125 instances"):
        wt.read(folder / "wt40.txt", index=125)


def test_single_instances_round_trip(wt40):
    """An instance picked from wt40 writes as its own block and reads back identically."""
    for k in (0, 62, 124):
        text = wt.write(wt40[k])
        back = wt.read(text, "orlib")
        assert {key: back[key] for key in DATA_KEYS} == {key: wt40[k][key] for key in DATA_KEYS}
        assert wt.write(back) == text
    assert len(wt.write(wt40[0]).split("\n")) == 7  # 6 lines of 20, final newline


def test_generated_files_hold_twenty_values_a_line():
    """A generated instance is written as OR-Library writes its files: at most 20 values a line."""
    text = wt.write(wt.generate(2, "n1000"), "orlib")
    assert max(len(line.split()) for line in text.splitlines()) == 20 and len(text.splitlines()) == 3 * 50


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
    inst = {
        "problem": "wtardiness",
        "name": "t",
        "n_jobs": 2,
        "processing_times": [1, 2],
        "weights": [3, 4],
        "due_dates": [123456, 7],
    }
    text = wt.write(inst)
    assert text.split("\n")[2] == " 123456      7"
    assert wt.read(text)["due_dates"] == [123456, 7]


@pytest.fixture(scope="module")
def first(published) -> str:
    """The six lines of wt40.txt's first instance, which the broken-file cases edit."""
    return "\n".join(published("wt40.txt").split("\n")[:6]) + "\n"


def _edit(text: str, lineno: int, new: str | None) -> str:
    """An edit of the first instance (six lines) of an OR-Library wt file."""
    return edit_line("\n".join(text.split("\n")[:6]), lineno, new) + "\n"


def _row1(text: str) -> str:
    return text.split("\n")[0]


BROKEN = [
    (
        "non-integer",
        lambda t: _edit(t, 3, _row1(t).replace("26", "2G", 1)),
        None,
        r"^<text>:3: expected an integer, got '2G'$",
    ),
    (
        "float token",
        lambda t: _edit(t, 2, _row1(t).replace("26", "2.5", 1)),
        None,
        r"^<text>:2: expected an integer, got '2\.5'$",
    ),
    (
        "negative weight",
        lambda t: _edit(t, 3, _row1(t).replace("26", "-6", 1)),
        40,
        r"^<text>:3: instance 1 job 0: negative weight -6$",
    ),
    (
        "negative due date",
        lambda t: _edit(t, 6, _row1(t).replace("24", "-4", 1)),
        40,
        r"^<text>:6: instance 1 job 21: negative due date -4$",
    ),
    (
        "missing line",
        lambda t: _edit(t, 6, None),
        40,
        r"^<text>:6: expected the 40 due dates of instance 1, got the end of the file after 20$",
    ),
    (
        "missing token",
        lambda t: _edit(t, 1, _row1(t)[6:]),
        40,
        r"^<text>:7: expected the 40 due dates of instance 1, got the end of the file after 39$",
    ),
    (
        "extra line",
        lambda t: _edit(t, 6, None) + _row1(t) + "\n" + _row1(t) + "\n",
        40,
        r"^<text>:8: expected the 40 processing times of instance 2, got the end of the file after 20$",
    ),
    (
        "not 3n",
        lambda t: _edit(t, 1, _row1(t)[6:]),
        None,
        r"^<text>: 119 integers do not make one instance \(3 n integers\); pass n=",
    ),
    (
        "empty with n",
        lambda t: "",
        40,
        r"^<text>:1: expected the 40 processing times of instance 1, got the end of the file$",
    ),
]


@pytest.mark.parametrize(("label", "make", "n", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_are_rejected(first, label, make, n, message):
    """Each defect raises ValueError with file:line and what was expected."""
    with pytest.raises(ValueError, match=message):
        wt.read(make(first), n=n)


def test_file_names_give_the_number_of_jobs(first, tmp_path):
    """A wt<n> file name gives n; other names need n= (or hold one instance); n must be positive."""
    path = tmp_path / "wt40.txt"
    path.write_text(_edit(first, 6, None), encoding="utf-8")
    with pytest.raises(ValueError, match=r"^wt40\.txt:6: expected the 40 due dates of instance 1"):
        wt.read(path)
    good = tmp_path / "wt40b.txt"
    good.write_text(first, encoding="utf-8")
    assert wt.read(good, n=40)["name"] == "wt40b-1"
    with pytest.raises(ValueError, match="n \\(jobs per instance\\) must be a positive integer"):
        wt.read(good, n=0)


def test_broken_optimum_files_are_rejected(tmp_path):
    """An optimum file line that is not one integer names its file and line."""
    opt = tmp_path / "wtopt40.txt"
    opt.write_text(" 913\n 12x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^wtopt40\.txt:2: expected one integer, got '12x'$"):
        read_optima(opt)


# ------------------------------------------------------------------ verifier


def _small() -> dict:
    return {
        "problem": "wtardiness",
        "name": "t",
        "n_jobs": 3,
        "processing_times": [3, 2, 4],
        "weights": [2, 5, 1],
        "due_dates": [4, 2, 5],
    }


def test_evaluate_small_exact():
    """Hand-computed objectives: C and max(0, C - d) weighted."""
    inst = _small()
    assert wt.evaluate(inst, {"sequence": [0, 1, 2]}) == 2 * 0 + 5 * 3 + 1 * 4  # C = 3, 5, 9
    assert wt.evaluate(inst, {"sequence": [1, 0, 2]}) == 0 + 2 * 1 + 1 * 4  # C = 2, 5, 9
    assert wt.evaluate(inst, {"sequence": [2, 1, 0]}) == 0 + 5 * 4 + 2 * 5  # C = 4, 6, 9


def test_evaluate_wt40_first_instance(wt40):
    """On wt40 instance 1 the verifier agrees with the plain formula, and EDD scores 1588."""
    inst = wt40[0]
    assert wt.evaluate(inst, {"sequence": list(range(40))}) == weighted_tardiness(inst, list(range(40)))
    assert wt.evaluate(inst, {"sequence": edd(inst)}) == 1588


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
    (
        "duplicate",
        {"sequence": [1, 0, 1]},
        r"^solution\.sequence\[2\]: job 1 is already at position 0 \(every job exactly once; job 2 is missing\)$",
    ),
    (
        "all same",
        {"sequence": [2, 2, 2]},
        r"^solution\.sequence\[1\]: job 2 is already at position 0 \(every job exactly once; job 0 is missing\)$",
    ),
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


@pytest.fixture(scope="module")
def references() -> dict:
    """CP-SAT references (short runs, cut off by their limit) for two n40 instances, computed once."""
    out = {}
    for seed in (0, 3):
        inst = wt.generate(seed, "n40")
        out[seed] = (inst, *wt.reference(inst, time_limit_s=1.5, workers=2))
    return out


@pytest.mark.slow
def test_random_sequences_average_zero_reward(references):
    """100 random permutations average a reward within 0.15 of 0 against the baseline.

    The reward's scale, naive - reference, depends on how far CP-SAT got before its limit, so
    the rewards are taken against the reference's start, the best rule: every reference is at
    least as good, and a better reference only brings the mean closer to 0, so this holds for
    whatever reference any machine finds.
    """
    for seed, (inst, _, meta) in references.items():
        naive = wt.evaluate(inst, wt.baseline(inst))
        start = weighted_tardiness(inst, best_rule(inst))
        assert naive > start >= meta["objective"], seed
        rewards = []
        for k in range(100):
            seq = list(range(inst["n_jobs"]))
            random.Random(k).shuffle(seq)
            rewards.append(reward(wt.evaluate(inst, {"sequence": seq}), naive, start))
        mean = sum(rewards) / len(rewards)
        assert abs(mean) < 0.15, (seed, mean)


# ----------------------------------------------------------------- reference


@pytest.mark.slow
def test_reference_proves_the_optimum_of_wt40_instance_3(wt40):
    """CP-SAT proves the published optimum 537 of wt40 instance 3 (about 2 s; the limit leaves ample slack).

    Asserting a value reached at a binding limit would depend on the machine's
    speed; a proof at a limit the solver never reaches does not. The proof is asserted
    when CP-SAT reports it; cut off by its limit (a machine loaded past all reason), the
    answer is still feasible, its bound below 537 and its objective above.
    """
    check_proves(wt, wt40[2], 537)


def test_reference_beats_baseline(references):
    """At any limit the reference is feasible, matches its meta, and is no worse than the baseline or the rules."""
    for inst, sol, meta in references.values():
        objective = check_answer(wt, inst, sol, meta)
        assert meta["bound"] <= objective <= weighted_tardiness(inst, best_rule(inst))
        assert objective < wt.evaluate(inst, wt.baseline(inst))


def test_reward_with_zero_reference():
    """Loose due dates: a reference of 0, and a naive equal to the reference, are scored sanely.

    Here the best rule already has no tardiness, and the reference never returns worse than
    that start: its 0 holds at any limit.
    """
    inst = wt.generate(2, "n8")
    sol, meta = wt.reference(inst, time_limit_s=60.0, workers=2)  # proved at once
    naive = wt.evaluate(inst, wt.baseline(inst))
    assert weighted_tardiness(inst, best_rule(inst)) == 0
    assert meta["objective"] == 0 == wt.evaluate(inst, sol) == meta["bound"] and naive > 0
    assert meta["status"] in ("OPTIMAL", "FEASIBLE", "FEASIBLE_HINT")
    assert reward(0, naive, 0) == 1.0 and reward(naive, naive, 0) == 0.0
    loose = dict(inst, due_dates=[sum(inst["processing_times"])] * inst["n_jobs"])
    sol, meta = wt.reference(loose, time_limit_s=60.0, workers=2)
    naive = wt.evaluate(loose, wt.baseline(loose))
    assert naive == meta["objective"] == 0
    assert reward(0, naive, meta["objective"]) == 1.0 and reward(1, naive, meta["objective"]) == -1.0


@pytest.mark.slow
def test_reference_falls_back_when_out_of_time():
    """At a tiny limit on n1000 the answer is still feasible and no worse than the best rule."""
    inst = wt.generate(0, "n1000")
    sol, meta = wt.reference(inst, time_limit_s=0.001, workers=1)
    objective = check_answer(wt, inst, sol, meta)
    assert meta["bound"] <= objective <= weighted_tardiness(inst, best_rule(inst))


def test_the_reference_starts_from_the_apparent_tardiness_cost_rule():
    """Without ATC in its hint, one CP-SAT worker stayed near EDD on 100 jobs, four times ATC's objective."""
    from orharbor.problem_modules.wtardiness.reference import ATC_K, atc, edd

    inst = wt.generate(1001, "n100")
    sequence = atc(inst, 2.0)
    assert sorted(sequence) == list(range(inst["n_jobs"]))
    best_atc = min(wt.evaluate(inst, {"sequence": atc(inst, k)}) for k in ATC_K)
    assert best_atc < wt.evaluate(inst, {"sequence": edd(inst)}) / 2
    solution, meta = wt.reference(inst, time_limit_s=1.0, workers=1)
    assert wt.evaluate(inst, solution) == meta["objective"] <= best_atc  # never worse than its hint, at any speed
