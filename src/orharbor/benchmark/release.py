"""A benchmark release: built from its recipe into one folder, resumably, and exported as Harbor tasks.

The release folder holds ``recipe.toml`` (the recipe it was built from, byte
for byte), one JSONL file per part of the recipe (each written when its last
solve is in, each with its own journal until then) and, once every part is
built, ``release.json``: the provenance (orharbor, OR-Tools and Harbor
versions, CPU model, limits, CPU time of the solves kept). A build that is
stopped keeps every finished solve; ``resume`` goes on, across sessions.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from orharbor.benchmark.recipe import Part, Recipe, RecipeError, load_recipe, parse_recipe
from orharbor.errors import UserError
from orharbor.files import refuse_existing, require_parent, write_atomically

if TYPE_CHECKING:  # for the annotation only: the functions import the engine when they run
    from orharbor.datasets.engine import Progress

RECIPE_FILE = "recipe.toml"
RELEASE_FILE = "release.json"


class ReleaseError(UserError):
    """A release folder that this command cannot build into or export from."""


#: Where the package ships its built releases (one folder each, as build-dataset --recipe wrote it).
SHIPPED_RELEASES = "releases"


def shipped_releases() -> dict[str, Path]:
    """The releases shipped in the package, by folder name and by tag (``orharbor-bench-1``, ``orharbor-bench@1.0``)."""
    from importlib import resources

    folder = Path(str(resources.files(__package__).joinpath(SHIPPED_RELEASES)))
    found: dict[str, Path] = {}
    for release in sorted(folder.iterdir()) if folder.is_dir() else []:
        recorded = release / RECIPE_FILE
        if recorded.is_file():
            found[release.name] = release
            found[parse_recipe(recorded.read_text(encoding="utf-8"), str(recorded)).tag] = release
    return found


def release_folder(name_or_path: str | Path) -> Path:
    """A release folder given by path, or a shipped release by name or tag; ReleaseError naming the shipped ones."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    shipped = shipped_releases()
    if str(name_or_path) in shipped:
        return shipped[str(name_or_path)]
    known = ", ".join(sorted(shipped))
    raise ReleaseError(f"--release {name_or_path}: neither a release folder nor a shipped release ({known})")


def build_release(
    recipe: Recipe | str | Path,
    out: str | Path,
    pool_factory: Callable,
    *,
    resume: bool = False,
    force: bool = False,
    progress_factory: Callable[[int], Progress] | None = None,
    warn: Callable[[str], None] = lambda m: None,
    say: Callable[[str], None] = lambda m: None,
) -> Recipe:
    """Build every part of ``recipe`` (a :class:`Recipe`, a shipped name or a file) into the folder ``out``; return it.

    Refused before anything is solved: a folder built from another recipe, and
    (without ``resume`` or ``force``) a folder holding any of the parts or their
    journals. With ``resume``, finished parts are checked and kept, journaled
    ones go on, the rest start. ``pool_factory()`` gives the solve pool.
    """
    from orharbor.datasets.engine import finished_rows, journal_path, run_builds

    if not isinstance(recipe, Recipe):
        recipe = load_recipe(recipe)
    out = Path(out)
    require_parent(out, "--out")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"--out {out} is a file; a release is built into a folder")
    recorded = out / RECIPE_FILE
    if recorded.exists() and not force:
        before = recorded.read_text(encoding="utf-8")
        if before != recipe.text:
            added = _added_parts(before, recipe) if resume and not (out / RELEASE_FILE).exists() else None
            if added is None:
                raise ReleaseError(
                    f"{out} was built from another recipe (its {RECIPE_FILE} differs); build into "
                    "another folder, or start over with --force"
                )
            say(
                f"{recipe.tag}: the recipe grew by {len(added)} parts ({', '.join(added)}) since {out} was started; "
                "they are built beside the rest"
                if added
                else f"{recipe.tag}: the recipe's text changed since {out} was started, not its parts"
            )
    elif not resume:
        refuse_existing([out / RELEASE_FILE], force)
    todo: list[Part] = []
    for part in recipe.parts:
        path, journal = out / part.file, journal_path(out / part.file)
        if resume and not journal.exists() and path.exists():
            finished_rows(part.plan, path)  # NotThisBuild unless these are the part's rows
            continue
        if not resume:
            refuse_existing([path, journal], force)
        todo.append(part)
    out.mkdir(exist_ok=True)
    write_atomically(recorded, recipe.text)
    if todo:
        rows = sum(part.plan.num_rows for part in todo)
        say(
            f"{recipe.tag}: {len(todo)} of {len(recipe.parts)} parts to build ({rows} rows, "
            f"{sum(part.plan.slots() for part in todo)} instances at {todo[0].plan.reference_time_limit_s:g} s)"
        )
        start = time.monotonic()
        run_builds(
            [(part.plan, out / part.file) for part in todo],
            pool_factory(),
            resume=resume,
            progress=progress_factory(rows) if progress_factory else None,
            warn=warn,
        )
        say(f"built {len(todo)} parts in {time.monotonic() - start:.0f} s")
    else:
        say(f"{out} already holds every part of {recipe.tag}: nothing to build")
        if (out / RELEASE_FILE).exists():
            return recipe  # its provenance stays that of the machine and time that built it
    write_atomically(out / RELEASE_FILE, json.dumps(provenance(recipe, out), indent=1) + "\n")
    return recipe


def _added_parts(before: str, recipe: Recipe) -> list[str] | None:
    """The names of the parts ``recipe`` adds to the recipe text ``before``, or None unless it only adds parts
    (same name, version and export settings, every earlier part unchanged): how a tier grows before release."""
    try:
        earlier = parse_recipe(before, RECIPE_FILE)
    except RecipeError:
        return None
    same = (earlier.name, earlier.version, earlier.export) == (recipe.name, recipe.version, recipe.export)
    if not same or not set(earlier.parts) <= set(recipe.parts):
        return None
    return [part.name for part in recipe.parts if part not in earlier.parts]


def provenance(recipe: Recipe, out: Path) -> dict:
    """What the release was built with and how much it cost, from its rows."""
    from orharbor.datasets.build import cpu_model
    from orharbor.datasets.engine import cpu_share
    from orharbor.datasets.rows import iter_rows, row_instances

    cpu_s = wall_s = 0.0
    instances = skipped = 0
    statuses: dict[str, int] = {}
    shares = []  # CPU seconds per wall second of each solve that ran to its time limit
    per_instance = []  # each reference's hint, limit, threads, status and bound, and the instance's best known
    for part in recipe.parts:
        for row in iter_rows(out / part.file):
            for instance in row_instances(row):
                meta = instance.reference_meta
                instances += 1
                cpu_s += float(meta.get("cpu_time_s", 0.0))
                wall_s += float(meta.get("wall_time_s", 0.0))
                statuses[str(meta.get("status"))] = statuses.get(str(meta.get("status")), 0) + 1
                if (share := cpu_share(meta)) is not None:
                    shares.append(share)
                per_instance.append(_instance_record(instance))
            skipped += len(row.get("skipped_seeds", []))
    return {
        "name": recipe.name,
        "version": recipe.version,
        "tag": recipe.tag,
        "parts": [{"file": part.file, "rows": part.plan.num_rows} for part in recipe.parts],
        # built (the rows are the evidence) but not exported, each with the recipe's reason
        "dropped": [
            {"file": part.file, "reason": recipe.dropped[part.name]}
            for part in recipe.parts
            if part.name in recipe.dropped
        ],
        "instances": instances,
        "seeds_passed_over": skipped,
        "reference_statuses": statuses,
        "solve_cpu_time_s": round(cpu_s, 1),
        "reference_wall_time_s": round(wall_s, 1),
        # how much of a core the references that used their whole limit got (1.0 on an otherwise idle machine)
        "reference_cpu_share": {"min": round(min(shares), 2), "median": round(sorted(shares)[len(shares) // 2], 2)}
        if shares
        else None,
        "built_with": {
            "orharbor": _version("orharbor"),
            "ortools": _version("ortools"),
            "harbor": _version("harbor"),
            "python": platform.python_version(),
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
        },
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "references": per_instance,
    }


def _instance_record(instance) -> dict:
    """One instance of a release: its reference (start, limit, threads, status, bound) and its best known value."""
    meta, known = instance.reference_meta, instance.best_known
    record = {
        "id": instance.key,
        "reference": instance.reference,
        "hint": (meta.get("hint") or {}).get("from"),
        "time_limit_s": meta.get("time_limit_s"),
        "workers": meta.get("workers"),
        "status": meta.get("status"),
        "bound": meta.get("bound"),
    }
    if "ladder" in meta:
        record["ladder"] = {k: v for k, v in meta["ladder"].items() if k != "budget_s"}
    if known:
        record["best_known"] = known
    if "best_known_run" in meta:
        run = meta["best_known_run"]
        record["best_known_run"] = {
            k: run.get(k) for k in ("solver", "time_limit_s", "workers", "objective", "bound", "cpu_time_s")
        }
    return record


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def read_release(folder: str | Path) -> tuple[Recipe, dict[str, list[dict]]]:
    """The recipe of a built release (a folder, or a shipped release by name or tag) and the rows of each of its
    parts (every part must be built)."""
    from orharbor.datasets.engine import journal_path
    from orharbor.datasets.rows import read_rows

    folder = release_folder(folder)
    recorded = folder / RECIPE_FILE
    if not recorded.is_file():
        raise ReleaseError(
            f"{folder} is not a release folder (no {RECIPE_FILE}); build one with "
            "`orharbor build-dataset --recipe NAME --out FOLDER`"
        )
    try:
        recipe = parse_recipe(recorded.read_text(encoding="utf-8"), str(recorded))
    except RecipeError as exc:
        raise ReleaseError(str(exc)) from None
    missing = [part.file for part in recipe.parts if not (folder / part.file).is_file()]
    if missing:
        journaled = [f for f in missing if journal_path(folder / f).exists()]
        more = f" ({len(journaled)} of them journaled: --resume the build)" if journaled else ""
        raise ReleaseError(f"{folder} is not fully built: {len(missing)} parts missing, e.g. {missing[0]}{more}")
    return recipe, {part.name: read_rows(folder / part.file) for part in recipe.parts}


def smoke_rows(recipe: Recipe, rows: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The smoke subset: per class, the first ``per_class`` rows of its first level-1 and first level-2 part
    (of the parts the release exports)."""
    chosen: dict[str, list[dict]] = {}
    seen: set[tuple[str, int]] = set()
    for part in recipe.released_parts:
        key = (part.plan.problem, part.plan.level)
        if key in seen:
            continue
        seen.add(key)
        chosen[part.name] = rows[part.name][: recipe.smoke_per_class]
    return chosen
