"""Modelling specs: one YAML file each, validated with JSON Schema before use.

A spec states a problem in words (``description``), optionally ships data files
(``template``: a folder copied into the agent's ``/app``), names a golden script
that solves it with a real solver, and lists the files the answer must contain
(``required_outputs``: exact text after trimming, or a number with a tolerance).
Paths are relative to the spec's own folder. Errors name the file and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from orharbor.errors import UserError
from orharbor.schema import first_error, load_validator
from orharbor.verifiers.modelling import DEFAULT_ABS_TOL, DEFAULT_REL_TOL

#: Golden scripts get this many wall-clock seconds unless the spec says otherwise.
DEFAULT_TIME_LIMIT_S = 120.0


class SpecError(UserError):
    """A spec file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Spec:
    """One validated spec with its paths resolved."""

    id: str
    path: Path
    difficulty: str
    description: str
    golden_script: Path
    outputs: dict[str, dict]  # file name -> {"text": ...} or {"value", "rel_tol", "abs_tol"}
    template: Path | None = None
    hints: tuple[dict, ...] = ()
    tags: tuple[str, ...] = ()
    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    data_files: tuple[str, ...] = field(default=())  # template files, relative, sorted


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return load_validator("orharbor.modelling", "spec_schema.json")


def shipped_specs_dir() -> Path:
    """The folder of specs shipped inside the package."""
    return Path(str(resources.files("orharbor.modelling").joinpath("specs")))


def load_specs(folder: str | Path) -> list[Spec]:
    """Every ``*.yaml`` / ``*.yml`` spec directly in ``folder``, sorted by id; ids must be unique.

    The first bad file (in name order) is the SpecError raised.
    """
    specs, errors = read_specs(folder)
    if errors:
        raise errors[0][1]
    return specs


def read_specs(folder: str | Path) -> tuple[list[Spec], list[tuple[Path, SpecError]]]:
    """Every spec of ``folder`` that loads (sorted by id), and (path, error) of each file that does not.

    A second spec with an id already taken is an error of its file. A folder
    with no spec files at all is a SpecError.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise SpecError(f"{folder}: not a folder of spec files")
    paths = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    if not paths:
        raise SpecError(f"{folder}: no *.yaml spec files")
    specs: dict[str, Spec] = {}
    errors: list[tuple[Path, SpecError]] = []
    for path in paths:
        try:
            spec = load_spec(path)
            if spec.id in specs:
                raise SpecError(f"{path}: id: {spec.id!r} is also the id of {specs[spec.id].path.name}")
        except SpecError as exc:
            errors.append((path, exc))
            continue
        specs[spec.id] = spec
    return [specs[key] for key in sorted(specs)], errors


def load_spec(path: str | Path) -> Spec:
    """Read, validate and resolve one spec file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from None
    error = first_error(_validator(), data, "(spec)")
    if error:
        raise SpecError(f"{path}: {error}")
    if data["id"] != path.stem:
        raise SpecError(f"{path}: id: {data['id']!r} must equal the file name {path.stem!r}")
    base = path.parent
    golden = _inside(base, data["golden_script"], path, "golden_script")
    if not golden.is_file():
        raise SpecError(f"{path}: golden_script: {data['golden_script']} does not exist")
    template = None
    files: tuple[str, ...] = ()
    if "template" in data:
        template = _inside(base, data["template"], path, "template")
        if not template.is_dir():
            raise SpecError(f"{path}: template: {data['template']} is not a folder")
        files = tuple(sorted(str(p.relative_to(template)) for p in template.rglob("*") if p.is_file()))
        clash = sorted(set(files) & set(data["required_outputs"]))
        if clash:
            raise SpecError(f"{path}: required_outputs: {clash[0]} is also a template file")
    return Spec(
        id=data["id"],
        path=path,
        difficulty=data["difficulty"],
        description=data["description"].strip(),
        golden_script=golden,
        outputs={k: expected_output(v) for k, v in data["required_outputs"].items()},
        template=template,
        hints=tuple(data.get("hints", ())),
        tags=tuple(data.get("tags", ())),
        time_limit_s=float(data.get("time_limit_s", DEFAULT_TIME_LIMIT_S)),
        data_files=files,
    )


def expected_output(value: object) -> dict:
    """A required output in the verifier's shape: ``{"text": ...}`` or ``{"value", "rel_tol", "abs_tol"}``."""
    if isinstance(value, str):
        return {"text": value.strip()}
    if isinstance(value, (int, float)):
        value = {"value": value}
    assert isinstance(value, dict)
    return {
        "value": float(value["value"]),
        "rel_tol": float(value.get("rel_tol", DEFAULT_REL_TOL)),
        "abs_tol": float(value.get("abs_tol", DEFAULT_ABS_TOL)),
    }


def _inside(base: Path, relative: str, path: Path, key: str) -> Path:
    target = (base / relative).resolve()
    if not target.is_relative_to(base.resolve()):
        raise SpecError(f"{path}: {key}: {relative} points outside the spec's folder")
    return target
