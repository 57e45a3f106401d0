"""Dataset rows: JSON Schema validation and JSONL reading and writing.

A bad row is reported with its line number and the offending key, before
anything is built from it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable, Iterator

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
        for key in ("eval_references", "eval_baselines", "eval_reference_solutions", "eval_baseline_solutions"):
            if key in row and len(row[key]) != n:
                raise RowError(f"{where}: {key}: has {len(row[key])} items for {n} eval_seeds")
    return row


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
