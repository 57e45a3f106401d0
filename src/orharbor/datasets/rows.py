"""Dataset rows: JSON Schema validation and JSONL reading and writing.

A bad row is reported with its line number and the offending key, before
anything is built from it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import jsonschema

from orharbor import problem_modules
from orharbor.errors import UserError
from orharbor.jsonl import compact, read_jsonl, write_jsonl
from orharbor.schema import first_error, load_validator


#: Also enforced in Python: JSON Schema's "$" would accept a trailing newline.
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,120}")


class RowError(UserError):
    """A dataset row that does not follow the row schema, or that this orharbor cannot use."""


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return load_validator("orharbor.datasets", "row_schema.json")


def validate_row(row: object, where: str = "row") -> dict:
    """Check ``row`` against the schema and the problem registry; return it."""
    if isinstance(row, dict) and row.get("level") == 1 and "instance_seed" not in row and "instance" not in row:
        raise RowError(f"{where}: instance_seed: a level-1 row needs 'instance_seed' or an explicit 'instance'")
    error = first_error(_validator(), row, "(row)")
    if error:
        raise RowError(f"{where}: {error}")
    assert isinstance(row, dict)
    if not ID_PATTERN.fullmatch(row["id"]):
        raise RowError(f"{where}: id: {row['id']!r} must be lowercase letters, digits, '.', '_' or '-'")
    for key in ("instance_seed", "eval_seeds"):
        values = row.get(key, [])
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, int) or isinstance(value, bool):
                raise RowError(f"{where}: {key}: {value!r} is not an integer")
    try:
        module = problem_modules.get(row["problem"])
    except problem_modules.UnknownProblem as exc:
        raise RowError(f"{where}: problem: {exc}") from None
    if row["size"] not in module.SIZES:
        raise RowError(f"{where}: size: {row['size']!r} is not a size of {row['problem']} ({', '.join(module.SIZES)})")
    if row["level"] == 2:
        n = len(row["eval_seeds"])
        for key in (
            "eval_references",
            "eval_baselines",
            "eval_reference_solutions",
            "eval_baseline_solutions",
            "eval_best_known",
        ):
            if key in row and len(row[key]) != n:
                raise RowError(f"{where}: {key}: has {len(row[key])} items for {n} eval_seeds")
    _check_best_known(row, where)
    return row


def normalise_best_known(entry: dict) -> dict:
    """A best known value in the row's shape, ``{"value", "source", "bound"}`` (bound: a proven lower bound, or None).

    Rows built before it (orharbor-bench 1.0's Taillard rows) hold
    ``{"lower_bound", "upper_bound", "status", "source"}``: the upper bound is
    the best known value, the lower bound its bound (``status`` follows from the
    two: closed when they are equal). Every reader gets rows through
    :func:`validate_row`, which puts each best known value through here, so the
    files as shipped stay as they were built.
    """
    if "value" in entry:
        return {"value": entry["value"], "source": entry["source"], "bound": entry.get("bound")}
    return {"value": entry["upper_bound"], "source": entry["source"], "bound": entry.get("lower_bound")}


class RowInstance(NamedTuple):
    """One instance a row scores, with what the build stored for it: level 1's instance, or one evaluation instance.

    ``key`` names it within its release (the row's id, with ``#i`` for the i-th
    evaluation instance); ``seed`` is its generator seed (None for a published
    instance carried in the row).
    """

    key: str
    seed: int | None
    reference: float | None
    reference_solution: object
    reference_meta: dict
    baseline: float | None
    baseline_solution: object
    best_known: dict | None
    best_known_solution: object


def row_instances(row: dict) -> Iterator[RowInstance]:
    """Every instance of a validated row, in order: one for level 1, one per evaluation instance for level 2.

    The one reading of the level-1 and level-2 shapes for whoever goes through
    a row instance by instance (a release's provenance, its checks, its gap tables).
    """
    if row["level"] == 1:
        yield RowInstance(
            row["id"],
            row.get("instance_seed"),
            row.get("reference"),
            row.get("reference_solution"),
            row.get("reference_meta") or {},
            row.get("baseline"),
            row.get("baseline_solution"),
            row.get("best_known"),
            row.get("best_known_solution"),
        )
        return
    n = len(row["eval_seeds"])

    def column(key: str, default=None) -> list:
        return row.get(key) or [default] * n

    for i, parts in enumerate(
        zip(
            row["eval_seeds"],
            column("eval_references"),
            column("eval_reference_solutions"),
            column("eval_reference_metas", {}),
            column("eval_baselines"),
            column("eval_baseline_solutions"),
            column("eval_best_known"),
            column("eval_best_known_solutions"),
        )
    ):
        yield RowInstance(f"{row['id']}#{i}", *parts)


def instance_of(row: dict, item: RowInstance) -> dict:
    """The instance ``item`` of ``row`` names: the one a published row carries, else its generator's from its seed."""
    if "instance" in row:
        return row["instance"]
    assert item.seed is not None  # only a published instance has no seed, and its row carries it
    return problem_modules.get(row["problem"]).generate(item.seed, row["size"])


def best_known_values(row: dict) -> list[float] | None:
    """The best known value of each instance of a row (level 1: one), in order; None unless it has them."""
    if "best_known" not in row and "eval_best_known" not in row:
        return None
    values = []
    for item in row_instances(row):
        assert item.best_known is not None  # the row has the column: every instance has its entry
        values.append(normalise_best_known(item.best_known)["value"])
    return values


def _check_best_known(row: dict, where: str) -> None:
    """Normalise the row's best known values in place; RowError unless ``bound <= value <= reference`` each."""
    misplaced = "eval_best_known" if row["level"] == 1 else "best_known"
    if misplaced in row:
        right = "best_known" if row["level"] == 1 else "eval_best_known, one per evaluation instance"
        raise RowError(f"{where}: {misplaced}: a level-{row['level']} row carries its best known value in {right}")
    if row["level"] == 1 and "best_known" in row:
        row["best_known"] = _in_order(row["best_known"], row.get("reference"), where, "best_known", "reference")
    if row["level"] == 2 and "eval_best_known" in row:
        references = row.get("eval_references") or [None] * len(row["eval_best_known"])
        row["eval_best_known"] = [
            _in_order(entry, references[i], where, f"eval_best_known[{i}]", f"eval_references[{i}]")
            for i, entry in enumerate(row["eval_best_known"])
        ]


def _in_order(entry: dict, reference: float | None, where: str, key: str, reference_key: str) -> dict:
    known = normalise_best_known(entry)
    value, bound = known["value"], known["bound"]
    if bound is not None and bound > value:
        raise RowError(
            f"{where}: {key}: bound {bound:g} is above its value {value:g} (a lower bound cannot exceed "
            "a value some answer reached)"
        )
    if reference is not None and value > reference:
        raise RowError(
            f"{where}: {key}: value {value:g} is above {reference_key} {reference:g} (the best known value "
            "is the best any answer reached, the reference's included)"
        )
    return known


def read_rows(path: str | Path) -> list[dict]:
    """All rows of a JSONL file, each validated; errors name ``file:line``."""
    return list(iter_rows(path))


def iter_rows(path: str | Path) -> Iterator[dict]:
    """Validated rows of a JSONL file, lazily."""
    for where, row in read_jsonl(path, RowError):
        yield validate_row(row, where)


def write_rows(rows: Iterable[dict], path: str | Path) -> int:
    """Write rows as JSONL with stable key order (beside ``path``, then renamed); return how many."""
    return write_jsonl(path, rows, dumps_row)


def dumps_row(row: dict) -> str:
    """One row as a line: keys in schema order first, then the rest sorted."""
    order = list(_validator().schema["properties"])
    ordered = {k: row[k] for k in order if k in row}
    ordered.update({k: row[k] for k in sorted(row) if k not in ordered})
    return compact(ordered)


def shipped_datasets() -> list[Path]:
    """The small datasets shipped inside the package, one JSONL file per problem."""
    folder = Path(str(resources.files("orharbor.datasets").joinpath("data")))
    return sorted(folder.glob("*.jsonl"))
