"""Dataset rows: schema validation with key-naming messages, JSONL I/O and row planning."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from orharbor.datasets import build
from orharbor.datasets.build import EVAL_SEED_BASE, UnknownSize, plan_rows
from orharbor.datasets.engine import build_dataset
from orharbor.datasets.rows import (
    RowError,
    dumps_row,
    iter_rows,
    normalise_best_known,
    read_rows,
    row_instances,
    validate_row,
    write_rows,
)
from orharbor.errors import UserError
from orharbor import problem_modules

js = problem_modules.get("jobshop")


def _build(level: int) -> dict:
    rows = build_dataset(
        "jobshop", ["4x4"], level, 1, reference_time_limit_s=1, workers=1, eval_instances=2, solve_time_limit_s=2
    )
    assert len(rows) == 1
    return rows[0]


@pytest.fixture(scope="module")
def level1_row() -> dict:
    return _build(1)


@pytest.fixture(scope="module")
def level2_row() -> dict:
    return _build(2)


# ------------------------------------------------------------------ valid rows


def test_built_level1_row_is_valid(level1_row):
    """A built level-1 row validates and carries verifier-checked reference and baseline values."""
    row = copy.deepcopy(level1_row)
    assert validate_row(row) is row
    assert row["id"] == "jobshop-4x4-l1-s0" and row["level"] == 1 and row["instance_seed"] == 0
    assert row["generator_version"] == js.GENERATOR_VERSION
    instance = js.generate(0, "4x4")
    assert js.evaluate(instance, row["reference_solution"]) == row["reference"]
    assert js.evaluate(instance, row["baseline_solution"]) == row["baseline"]
    assert row["reference"] <= row["baseline"]


def test_built_level2_row_is_valid(level2_row):
    """A built level-2 row validates and has one reference/baseline per eval seed."""
    row = copy.deepcopy(level2_row)
    assert validate_row(row) is row
    assert row["eval_seeds"] == [EVAL_SEED_BASE, EVAL_SEED_BASE + 1]
    assert row["solve_time_limit_s"] == 2
    for i, seed in enumerate(row["eval_seeds"]):
        instance = js.generate(seed, "4x4")
        assert js.evaluate(instance, row["eval_reference_solutions"][i]) == row["eval_references"][i]
        assert js.evaluate(instance, row["eval_baseline_solutions"][i]) == row["eval_baselines"][i]
    assert len(row["eval_reference_metas"]) == 2


def test_row_instances_reads_both_shapes_instance_by_instance(level1_row, level2_row):
    """A level-1 row is one instance; a level-2 row one per evaluation seed, each with its own column entries."""
    (one,) = row_instances(level1_row)
    assert one.key == level1_row["id"] and one.seed == 0 and one.reference == level1_row["reference"]
    assert one.reference_solution == level1_row["reference_solution"] and one.baseline == level1_row["baseline"]
    many = list(row_instances(level2_row))
    assert [i.key for i in many] == [f"{level2_row['id']}#0", f"{level2_row['id']}#1"]
    assert [i.seed for i in many] == level2_row["eval_seeds"]
    assert [i.reference for i in many] == level2_row["eval_references"]
    assert [i.baseline_solution for i in many] == level2_row["eval_baseline_solutions"]
    assert [i.reference_meta for i in many] == level2_row["eval_reference_metas"]
    assert all(i.best_known is None for i in many)  # a plain build stores none
    known = dict(
        copy.deepcopy(level2_row),
        eval_best_known=[{"value": r, "source": "reference", "bound": None} for r in level2_row["eval_references"]],
    )
    assert [i.best_known["value"] for i in row_instances(known)] == level2_row["eval_references"]


def test_minimal_rows_are_valid():
    """The smallest rows the schema allows (a seed or an explicit instance; level-2 seeds) validate."""
    validate_row(
        {"id": "a", "problem": "jobshop", "size": "4x4", "level": 1, "generator_version": 1, "instance_seed": 0}
    )
    validate_row(
        {
            "id": "ft06",
            "problem": "jobshop",
            "size": "6x6",
            "level": 1,
            "generator_version": 1,
            "instance": js.generate(0, "6x6"),
            "source": "ft06",
        }
    )
    validate_row(
        {
            "id": "b",
            "problem": "jobshop",
            "size": "4x4",
            "level": 2,
            "generator_version": 1,
            "eval_seeds": [5],
            "solve_time_limit_s": 1,
        }
    )


# ------------------------------------------------------------------ broken rows


def _drop(key):
    return lambda row: {k: v for k, v in row.items() if k != key}


def _set(key, value):
    return lambda row: {**row, key: value}


BROKEN_LEVEL1 = [
    ("missing-id", _drop("id"), r"^row: id: 'id' is a required property$"),
    ("missing-problem", _drop("problem"), r"^row: problem: 'problem' is a required property$"),
    ("bad-id-pattern", _set("id", "Jobshop 4x4"), r"^row: id: 'Jobshop 4x4' does not match"),
    ("id-starts-with-dot", _set("id", ".hidden"), r"^row: id: '\.hidden' does not match"),
    ("id-with-slash", _set("id", "a/b"), r"^row: id: 'a/b' does not match"),
    (
        "unknown-problem",
        _set("problem", "jobshp"),
        r"^row: problem: unknown problem 'jobshp'; did you mean 'jobshop'\?",
    ),
    (
        "unknown-problem-no-hint",
        _set("problem", "zzz"),
        r"^row: problem: unknown problem 'zzz' \(known: jobshop, rcpsp",
    ),
    ("unknown-size", _set("size", "5x5"), r"^row: size: '5x5' is not a size of jobshop \(4x4, 6x6, 10x10, "),
    ("level-3", _set("level", 3), r"^row: level: 3 is not one of \[1, 2\]$"),
    ("level-bool", _set("level", True), r"^row: level: True is not one of \[1, 2\]$"),
    ("extra-key", _set("colour", "red"), r"^row: .*'colour' was unexpected"),
    (
        "reference-without-solution",
        _drop("reference_solution"),
        r"^row: .*'reference_solution' is a dependency of 'reference'",
    ),
    (
        "baseline-without-solution",
        _drop("baseline_solution"),
        r"^row: .*'baseline_solution' is a dependency of 'baseline'",
    ),
    ("negative-instance-seed", _set("instance_seed", -1), r"^row: instance_seed: -1 is less than the minimum of 0$"),
    ("string-instance-seed", _set("instance_seed", "0"), r"^row: instance_seed: '0' is not of type 'integer'$"),
    ("generator-version-0", _set("generator_version", 0), r"^row: generator_version: 0 is less than the minimum"),
    ("string-reference", _set("reference", "849"), r"^row: reference: '849' is not of type 'number'$"),
]


@pytest.mark.parametrize("mutate, message", [c[1:] for c in BROKEN_LEVEL1], ids=[c[0] for c in BROKEN_LEVEL1])
def test_broken_level1_row(level1_row, mutate, message):
    """Each defect of a level-1 row raises RowError naming the offending key."""
    row = mutate(copy.deepcopy(level1_row))
    with pytest.raises(RowError, match=message):
        validate_row(row)


BROKEN_LEVEL2 = [
    ("missing-eval-seeds", _drop("eval_seeds"), r"^row: eval_seeds: 'eval_seeds' is a required property$"),
    (
        "missing-solve-time-limit",
        _drop("solve_time_limit_s"),
        r"^row: solve_time_limit_s: 'solve_time_limit_s' is a required property$",
    ),
    ("empty-eval-seeds", _set("eval_seeds", []), r"^row: eval_seeds: \[\] should be non-empty$"),
    (
        "negative-eval-seed",
        lambda r: {**r, "eval_seeds": [r["eval_seeds"][0], -4]},
        r"^row: eval_seeds\.1: -4 is less than the minimum of 0$",
    ),
    (
        "short-eval-references",
        lambda r: {**r, "eval_references": r["eval_references"][:1]},
        r"^row: eval_references: has 1 items for 2 eval_seeds$",
    ),
    (
        "long-eval-baselines",
        lambda r: {**r, "eval_baselines": r["eval_baselines"] * 2},
        r"^row: eval_baselines: has 4 items for 2 eval_seeds$",
    ),
    (
        "short-eval-reference-solutions",
        lambda r: {**r, "eval_reference_solutions": []},
        r"^row: eval_reference_solutions: has 0 items for 2 eval_seeds$",
    ),
    ("zero-solve-time", _set("solve_time_limit_s", 0), r"^row: solve_time_limit_s: 0 is less than or equal to"),
]


@pytest.mark.parametrize("mutate, message", [c[1:] for c in BROKEN_LEVEL2], ids=[c[0] for c in BROKEN_LEVEL2])
def test_broken_level2_row(level2_row, mutate, message):
    """Each defect of a level-2 row raises RowError naming the offending key."""
    row = mutate(copy.deepcopy(level2_row))
    with pytest.raises(RowError, match=message):
        validate_row(row)


def test_row_error_uses_given_place(level1_row):
    """The ``where`` argument prefixes the message."""
    with pytest.raises(RowError, match=r"^data\.jsonl:7: level: "):
        validate_row({**level1_row, "level": 9}, "data.jsonl:7")


def test_not_an_object():
    """A JSON value that is not an object is refused."""
    with pytest.raises(RowError, match=r"is not of type 'object'"):
        validate_row([1, 2])


def test_row_error_is_a_user_error():
    """RowError is a UserError: the CLI shows it as one line."""
    assert issubclass(RowError, UserError)


def test_id_with_trailing_newline_is_refused(level1_row):
    """An id ending in a newline is refused."""
    with pytest.raises(RowError, match=r"^row: id: "):
        validate_row({**level1_row, "id": "jobshop-4x4-l1-s0\n"})


def test_float_instance_seed_is_refused(level1_row):
    """An instance_seed of 3.0 is refused at validation (the generator needs an int)."""
    with pytest.raises(RowError, match=r"instance_seed"):
        validate_row({**level1_row, "instance_seed": 3.0})


def test_level1_without_instance_names_the_keys(level1_row):
    """A level-1 row without instance_seed or instance says which key is missing."""
    row = {k: v for k, v in level1_row.items() if k != "instance_seed"}
    with pytest.raises(RowError, match=r"instance_seed"):
        validate_row(row)


# ------------------------------------------------------------------ JSONL files


def test_write_then_read_round_trips(level1_row, level2_row, tmp_path):
    """write_rows then read_rows gives back exactly the rows, one line each."""
    path = tmp_path / "rows.jsonl"
    rows = [level1_row, level2_row]
    assert write_rows(rows, path) == 2
    assert read_rows(path) == rows
    assert path.read_text().count("\n") == 2
    assert list(iter_rows(path)) == rows


def test_write_is_stable(level1_row, tmp_path):
    """Rows with the same content but different key order write the same bytes."""
    scrambled = dict(reversed(list(level1_row.items())))
    write_rows([level1_row], tmp_path / "a.jsonl")
    write_rows([scrambled], tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_dumps_row_puts_id_first_then_schema_order(level1_row):
    """dumps_row writes 'id' first, known keys in schema order, unknown keys sorted at the end."""
    scrambled = dict(reversed(list(level1_row.items())))
    scrambled.update(zeta=1, alpha=2)
    keys = list(json.loads(dumps_row(scrambled)))
    assert keys[0] == "id"
    assert keys[:5] == ["id", "problem", "size", "level", "generator_version"]
    assert keys[-2:] == ["alpha", "zeta"]
    assert "\n" not in dumps_row(level1_row)


def test_dumps_row_refuses_nan(level1_row):
    """A NaN value cannot be written (a row must be strict JSON)."""
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps_row({**level1_row, "reference": float("nan")})


def test_bad_third_line_is_named(level1_row, tmp_path):
    """A bad row on line 3 is reported as '<file>:3:' with the offending key."""
    good = [dict(level1_row, id=f"row-{i}", instance_seed=i) for i in range(2)]
    lines = [dumps_row(r) for r in good] + [dumps_row({**level1_row, "level": 3})]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RowError, match=r"^mixed\.jsonl:3: level: 3 is not one of"):
        read_rows(path)


def test_blank_lines_are_skipped_but_counted(level1_row, tmp_path):
    """Blank lines are skipped, and line numbers still count them."""
    path = tmp_path / "gaps.jsonl"
    path.write_text(dumps_row(level1_row) + "\n\n   \n" + dumps_row({**level1_row, "size": "7x7"}) + "\n")
    with pytest.raises(RowError, match=r"^gaps\.jsonl:4: size: '7x7'"):
        read_rows(path)
    path.write_text("\n" + dumps_row(level1_row) + "\n\n")
    assert read_rows(path) == [level1_row]


def test_line_that_is_not_json(level1_row, tmp_path):
    """A line that is not JSON is reported with its number."""
    path = tmp_path / "broken.jsonl"
    path.write_text(dumps_row(level1_row) + "\n{'id': 'x'}\n")
    with pytest.raises(RowError, match=r"^broken\.jsonl:2: not valid JSON: Expecting property name"):
        read_rows(path)


def test_line_that_is_not_utf8(level1_row, tmp_path):
    """A line that is not UTF-8 text is reported with its number, like one that is not JSON."""
    path = tmp_path / "binary.jsonl"
    path.write_bytes(dumps_row(level1_row).encode() + b"\n\xff\xfe\n")
    with pytest.raises(RowError, match=r"^binary\.jsonl:2: not UTF-8 text"):
        read_rows(path)


def test_write_rows_renames_into_place(level1_row, tmp_path):
    """write_rows writes beside the target and renames: an existing file is replaced whole, nothing is left over."""
    path = tmp_path / "rows.jsonl"
    path.write_text("old\n")
    inode = path.stat().st_ino
    write_rows([level1_row], path)
    assert path.stat().st_ino != inode and read_rows(path) == [level1_row]
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]


def test_iter_rows_is_lazy(level1_row, tmp_path):
    """iter_rows yields good rows before reaching a bad line."""
    path = tmp_path / "lazy.jsonl"
    path.write_text(dumps_row(level1_row) + "\nnot json\n")
    rows = iter_rows(path)
    assert next(rows) == level1_row
    with pytest.raises(RowError, match=r"^lazy\.jsonl:2: "):
        next(rows)


# ------------------------------------------------------------------ plan_rows


def test_plan_rows_assigns_sizes_round_robin():
    """Sizes cycle in the given order and seeds count up from start_seed."""
    rows = plan_rows("jobshop", ["4x4", "6x6", "10x10"], 1, 7, start_seed=5)
    sizes = ["4x4", "6x6", "10x10"]
    assert [r["size"] for r in rows] == [sizes[i % 3] for i in range(7)]
    assert [r["instance_seed"] for r in rows] == list(range(5, 12))
    assert [r["id"] for r in rows] == [f"jobshop-{sizes[i % 3]}-l1-s{5 + i}" for i in range(7)]


def test_plan_rows_ids_unique_and_valid():
    """Planned ids are unique and every planned skeleton is a valid row."""
    for level in (1, 2):
        rows = plan_rows("jobshop", ["4x4", "4x4", "6x6"], level, 20)
        assert len({r["id"] for r in rows}) == 20
        for r in rows:
            validate_row(r)


def test_plan_rows_eval_seeds_disjoint():
    """Level-2 eval seeds never repeat, and never meet the level-1 seeds of the same start seed."""
    for start in (0, 17):
        level1 = plan_rows("jobshop", ["4x4", "6x6"], 1, 50, start_seed=start)
        level2 = plan_rows("jobshop", ["4x4", "6x6"], 2, 50, start_seed=start, eval_instances=4)
        eval_seeds = [s for r in level2 for s in r["eval_seeds"]]
        assert all(len(r["eval_seeds"]) == 4 for r in level2)
        assert len(set(eval_seeds)) == len(eval_seeds)
        assert not set(eval_seeds) & {r["instance_seed"] for r in level1}
        assert not set(eval_seeds) & {r["instance_seed"] for r in level2}


def test_plan_rows_level2_fields():
    """Level-2 skeletons carry solve_time_limit_s and the reference time limit."""
    (row,) = plan_rows("jobshop", ["4x4"], 2, 1, solve_time_limit_s=3.5, reference_time_limit_s=7.0)
    assert row["solve_time_limit_s"] == 3.5 and row["reference_time_limit_s"] == 7.0
    assert "solve_time_limit_s" not in plan_rows("jobshop", ["4x4"], 1, 1)[0]


def test_plan_rows_unknown_size():
    """An unknown size raises UnknownSize naming it and listing the valid sizes."""
    with pytest.raises(UnknownSize, match=re.escape("unknown size '5x5' for jobshop; sizes: " + ", ".join(js.SIZES))):
        plan_rows("jobshop", ["4x4", "5x5"], 1, 2)


def test_plan_rows_bad_level():
    """A level other than 1 or 2 is refused."""
    with pytest.raises(ValueError, match=r"level must be 1 or 2, got 3"):
        plan_rows("jobshop", ["4x4"], 3, 1)


def test_build_dataset_matches_plan(level1_row):
    """build_dataset fills in the planned skeleton without changing its id or seed."""
    (planned,) = build.plan_rows("jobshop", ["4x4"], 1, 1, reference_time_limit_s=1)
    assert {k: level1_row[k] for k in planned} == planned


# ------------------------------------------------------------------ best known values


def _known(value, bound=None, source="a longer run"):
    return {"value": value, "source": source, "bound": bound}


def _with_level1_best(shift, bound_shift=None):
    """A level-1 row mutation: best_known at reference + shift (its bound at reference + bound_shift)."""
    return lambda r: {
        **r,
        "best_known": _known(r["reference"] + shift, None if bound_shift is None else r["reference"] + bound_shift),
    }


def _with_eval_best(shifts, bounds=None):
    """A level-2 row mutation: eval_best_known[i] at eval_references[i] + shifts[i] (bounds likewise, None: none)."""
    bounds = bounds or [None] * len(shifts)
    return lambda r: {
        **r,
        "eval_best_known": [
            _known(ref + s, None if b is None else ref + b) for ref, s, b in zip(r["eval_references"], shifts, bounds)
        ],
    }


def test_best_known_values_in_order_are_valid_and_a_missing_bound_reads_as_none(level1_row, level2_row):
    """bound <= value <= reference holds with equality too; a best known value without a bound gets bound None."""
    row = _with_level1_best(0, 0)(copy.deepcopy(level1_row))
    assert validate_row(row, "r")["best_known"] == _known(level1_row["reference"], level1_row["reference"])
    row = {**copy.deepcopy(level1_row), "best_known": {"value": level1_row["reference"] - 3, "source": "s"}}
    assert validate_row(row)["best_known"] == {"value": level1_row["reference"] - 3, "source": "s", "bound": None}
    row = validate_row(_with_eval_best([0, -2], [-5, None])(copy.deepcopy(level2_row)))
    refs = level2_row["eval_references"]
    assert row["eval_best_known"] == [_known(refs[0], refs[0] - 5), _known(refs[1] - 2)]
    assert validate_row(
        {
            "id": "a",
            "problem": "jobshop",
            "size": "4x4",
            "level": 1,
            "generator_version": 1,
            "instance_seed": 0,
            "best_known": _known(900),
        }
    )  # no reference yet: nothing to compare


def test_the_old_shape_reads_as_the_new_one(level1_row):
    """{lower_bound, upper_bound, status, source} (orharbor-bench 1.0): value the upper bound, bound the lower."""
    ref = level1_row["reference"]
    old = {"lower_bound": ref - 7, "upper_bound": ref, "status": "open", "source": "the literature"}
    assert normalise_best_known(old) == _known(ref, ref - 7, "the literature")
    assert normalise_best_known({"upper_bound": ref, "source": "s"}) == _known(ref, None, "s")
    row = validate_row({**copy.deepcopy(level1_row), "best_known": old})
    assert row["best_known"] == _known(ref, ref - 7, "the literature")
    with pytest.raises(RowError, match=r"^row: best_known: bound .* is above its value"):
        validate_row({**copy.deepcopy(level1_row), "best_known": {**old, "lower_bound": ref + 1}})


def test_the_shipped_release_reads_in_the_new_shape_and_its_file_stays_as_built(tmp_path):
    """Every Taillard row of orharbor-bench 1.0 reads as {value, source, bound} with the published bounds; reading
    leaves the file's bytes alone, and a row written back holds the new shape."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "orharbor-bench-1" / "jobshop-taillard.jsonl"
    before = path.read_bytes()
    raw = [json.loads(line) for line in before.decode().splitlines()]
    rows = read_rows(path)
    assert len(rows) == len(raw) == 80 and path.read_bytes() == before
    for row, old in zip(rows, raw):
        known = old["best_known"]
        assert row["best_known"] == _known(known["upper_bound"], known["lower_bound"], known["source"])
    write_rows(rows[:2], tmp_path / "again.jsonl")
    assert [r["best_known"] for r in read_rows(tmp_path / "again.jsonl")] == [r["best_known"] for r in rows[:2]]
    written = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert [set(r["best_known"]) for r in written] == [{"value", "source", "bound"}] * 2


BROKEN_BEST_KNOWN_1 = [
    ("above-reference", _with_level1_best(1), r"^row: best_known: value \d+ is above reference \d+ "),
    ("bound-above-value", _with_level1_best(-3, -2), r"^row: best_known: bound \d+ is above its value \d+ "),
    (
        "not-a-number",
        _set("best_known", {"value": "849", "source": "s"}),
        r"^row: best_known: .* is not valid under any of the given schemas$",
    ),
    ("no-source", _set("best_known", {"value": 849}), r"^row: best_known: .* is not valid under any"),
    (
        "eval-best-known-at-level-1",
        lambda r: {**r, "eval_best_known": [_known(r["reference"])]},
        r"^row: eval_best_known: a level-1 row carries its best known value in best_known$",
    ),
]


@pytest.mark.parametrize(
    "mutate, message", [c[1:] for c in BROKEN_BEST_KNOWN_1], ids=[c[0] for c in BROKEN_BEST_KNOWN_1]
)
def test_a_level1_best_known_value_out_of_order_or_shape_is_refused(level1_row, mutate, message):
    with pytest.raises(RowError, match=message):
        validate_row(mutate(copy.deepcopy(level1_row)))


BROKEN_BEST_KNOWN_2 = [
    (
        "second-above-its-reference",
        _with_eval_best([0, 1]),
        r"^row: eval_best_known\[1\]: value \d+ is above eval_references\[1\] \d+ ",
    ),
    (
        "first-bound-above-value",
        _with_eval_best([-1, 0], [0, None]),
        r"^row: eval_best_known\[0\]: bound \d+ is above its value \d+ ",
    ),
    (
        "one-for-two-seeds",
        lambda r: {**_with_eval_best([0, 0])(r), "eval_best_known": [_known(1)]},
        r"^row: eval_best_known: has 1 items for 2 eval_seeds$",
    ),
    (
        "old-shape-in-the-list",
        lambda r: {**r, "eval_best_known": [{"upper_bound": 1, "source": "s"}] * 2},
        r"^row: eval_best_known\.0: 'value' is a required property$",
    ),
    (
        "best-known-at-level-2",
        lambda r: {**r, "best_known": _known(1)},
        r"^row: best_known: a level-2 row carries its best known value in eval_best_known, one per evaluation "
        r"instance$",
    ),
]


@pytest.mark.parametrize(
    "mutate, message", [c[1:] for c in BROKEN_BEST_KNOWN_2], ids=[c[0] for c in BROKEN_BEST_KNOWN_2]
)
def test_a_level2_best_known_value_out_of_order_or_shape_is_refused(level2_row, mutate, message):
    with pytest.raises(RowError, match=message):
        validate_row(mutate(copy.deepcopy(level2_row)))


def test_a_bad_best_known_value_is_named_with_its_file_and_line(level1_row, tmp_path):
    good = copy.deepcopy(level1_row)
    bad = _with_level1_best(5)(copy.deepcopy(level1_row))
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(RowError, match=r"^rows\.jsonl:2: best_known: value \d+ is above reference"):
        read_rows(path)
