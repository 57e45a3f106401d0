"""Benchmark recipes: one TOML file declares a named release, and every build of it gets the same instances.

A recipe fixes, per problem class, its tiers (standard sizes), the rows per
level, the seeds, the reference time limit, ``min_gap``, the agent budget and
resources, the solve time limit of level-2 programs, and the network policy;
published sets (Taillard's ta01-ta80) come in by name. A tier whose ladder
does not separate is ``dropped`` with its reason: still built (its rows are
the evidence), never exported. The recipe becomes a
list of :class:`Part`, one per output file, each an ordinary build plan, so a
release is built, journaled and resumed by the same engine as ``build-dataset``.
Shipped recipes live in ``recipes/`` (``--recipe orharbor-bench-1``); any other
file is named by its path.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from orharbor import problem_modules
from orharbor.datasets.engine import BuildPlan
from orharbor.errors import UserError
from orharbor.schema import first_error, load_validator


class RecipeError(UserError):
    """A recipe that cannot be read, or that names what orharbor does not have; one line naming the key."""


@dataclass(frozen=True)
class Part:
    """One output file of a release: its build plan and how its rows are exported."""

    name: str
    plan: BuildPlan
    agent_timeout_s: float

    @property
    def file(self) -> str:
        return f"{self.name}.jsonl"


@dataclass(frozen=True)
class Recipe:
    """A parsed, checked recipe."""

    name: str
    version: str
    description: str
    text: str
    export: dict
    parts: tuple[Part, ...]
    smoke_per_class: int = 1
    source: str = field(default="", compare=False)
    #: The parts left out of the release (built, never exported), each with the reason the recipe gives.
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def tag(self) -> str:
        """``name@version``, as ``harbor run -d`` takes it."""
        return f"{self.name}@{self.version}"

    @property
    def released_parts(self) -> tuple[Part, ...]:
        """The parts the release exports: every part but the dropped ones."""
        return tuple(part for part in self.parts if part.name not in self.dropped)


def shipped_recipes() -> list[str]:
    """Names of the recipes shipped in the package."""
    folder = resources.files(__package__).joinpath("recipes")
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def load_recipe(name_or_path: str | Path) -> Recipe:
    """The recipe shipped under that name, or the recipe file at that path."""
    shipped = resources.files(__package__).joinpath("recipes", f"{name_or_path}.toml")
    if isinstance(name_or_path, str) and "/" not in name_or_path and shipped.is_file():
        return parse_recipe(shipped.read_text(encoding="utf-8"), f"recipe {name_or_path}")
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(shipped_recipes())
        raise RecipeError(f"no recipe {str(name_or_path)!r}: neither a shipped recipe ({known}) nor a file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(f"cannot read the recipe {path}: {exc}") from None
    return parse_recipe(text, str(path))


@lru_cache(maxsize=1)
def _validator():
    return load_validator(__package__, "recipe_schema.json")


def parse_recipe(text: str, where: str = "recipe") -> Recipe:
    """Check a recipe's TOML text against the schema and against the problem classes; build its parts."""
    from orharbor.datasets.published import UnknownPublishedSet, expand_names

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{where}: not TOML: {exc}") from None
    error = first_error(_validator(), data, "(recipe)")
    if error:
        raise RecipeError(f"{where}: {error}")
    build = data["build"]
    parts: list[Part] = []
    for i, tier in enumerate(data["tiers"]):
        module = _module(tier["problem"], f"{where}: tiers[{i}]")
        if tier["size"] not in module.SIZES:
            raise RecipeError(
                f"{where}: tiers[{i}].size: {tier['size']!r} is not a size of {tier['problem']} "
                f"({', '.join(module.SIZES)})"
            )
        if not tier["level1_rows"] and not tier["level2_rows"]:
            raise RecipeError(f"{where}: tiers[{i}]: level1_rows and level2_rows are both 0")
        for level in (1, 2):
            rows = tier[f"level{level}_rows"]
            if rows:
                plan = BuildPlan(
                    tier["problem"],
                    (tier["size"],),
                    level,
                    rows,
                    _limit(tier, build),
                    build["solver_workers"],
                    tier.get("start_seed", build["start_seed"]),
                    tier.get("eval_instances", build["eval_instances"]),
                    float(tier["solve_time_limit_s"]),
                    float(build["min_gap"]),
                    skip_zero_reference=tier.get("skip_zero_reference", False),
                    **_strength(tier, build),
                )
                # part: when a tier grows by a part of its own (its own start_seed), built beside the first
                name = "-".join([tier["problem"], tier["size"], *([tier["part"]] if "part" in tier else [])])
                parts.append(Part(f"{name}-l{level}", plan, float(tier["agent_timeout_s"])))
    for i, entry in enumerate(data.get("published", [])):
        _module(entry["problem"], f"{where}: published[{i}]")
        try:
            names = expand_names(entry["problem"], entry["set"], entry.get("names"))
        except UnknownPublishedSet as exc:
            raise RecipeError(f"{where}: published[{i}]: {exc}") from None
        plan = BuildPlan(
            entry["problem"],
            (),
            1,
            len(names),
            _limit(entry, build),
            build["solver_workers"],
            published=entry["set"],
            names=tuple(names),
            **_strength(entry, build),
        )
        name = f"{entry['problem']}-{entry.get('part', entry['set'])}"  # part: when one set is built in several parts
        parts.append(Part(name, plan, float(entry["agent_timeout_s"])))
    names = [part.name for part in parts]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise RecipeError(f"{where}: {twice[0]} is declared twice")
    _no_shared_seeds(parts, where)
    return Recipe(
        data["name"],
        data["version"],
        data.get("description", ""),
        text,
        dict(data["export"]),
        tuple(parts),
        data.get("smoke", {}).get("per_class", 1),
        where,
        _dropped(data.get("dropped", []), parts, where),
    )


def _dropped(entries: list[dict], parts: list[Part], where: str) -> dict[str, str]:
    """Part name -> reason, for each ``[[dropped]]`` entry: every generated part of its class and size (and
    level, if given), the tier's growth parts included. An entry that drops nothing is an error (a typo)."""
    dropped: dict[str, str] = {}
    for i, entry in enumerate(entries):
        matched = [
            part.name
            for part in parts
            if not part.plan.published
            and part.plan.problem == entry["problem"]
            and part.plan.sizes == (entry["size"],)
            and entry.get("level", part.plan.level) == part.plan.level
        ]
        if not matched:
            level = f" level {entry['level']}" if "level" in entry else ""
            raise RecipeError(f"{where}: dropped[{i}]: no tier {entry['problem']} {entry['size']}{level} to drop")
        dropped.update((name, entry["reason"]) for name in matched)
    if parts and len(dropped) == len(parts):
        raise RecipeError(f"{where}: every part is dropped; the release would be empty")
    return dropped


def _no_shared_seeds(parts: list[Part], where: str) -> None:
    """Parts of one class, size and level (a tier and the parts it grew by) may not share an instance
    seed, counting every seed a slot could pass over (``min_gap``): a shared one is the same instance twice."""
    from orharbor.datasets.engine import MAX_ATTEMPTS

    seen: dict[tuple, tuple[str, set]] = {}
    for part in parts:
        plan = part.plan
        if plan.published:
            continue
        seeds = {
            plan.seed(row, slot, attempt)
            for row in range(plan.num_rows)
            for slot in range(1 if plan.level == 1 else plan.eval_instances)
            for attempt in range(MAX_ATTEMPTS)
        }
        key = (plan.problem, plan.sizes, plan.level)
        other, drawn = seen.get(key, ("", set()))
        if drawn & seeds:
            raise RecipeError(
                f"{where}: {part.name} and {other} can draw the same instance seeds "
                f"(e.g. {min(drawn & seeds)}); give {part.name} a start_seed beyond {max(drawn)}"
            )
        seen[key] = (part.name, drawn | seeds)


def _limit(entry: dict, build: dict) -> float:
    """The reference's time limit of a tier or published set: its own, else the build's."""
    return float(entry.get("reference_time_limit_s", build["reference_time_limit_s"]))


def _strength(entry: dict, build: dict) -> dict:
    """The ladder warm start and best-known run of a tier or published set (BuildPlan fields), off unless declared."""
    return {
        "ladder_budget_s": float(build.get("ladder_budget_s", 0.0)),
        "best_known_time_limit_s": float(
            entry.get("best_known_time_limit_s", build.get("best_known_time_limit_s", 0.0))
        ),
        "best_known_workers": int(build.get("best_known_workers", 1)),
    }


def _module(problem: str, where: str):
    try:
        return problem_modules.get(problem)
    except problem_modules.UnknownProblem as exc:
        raise RecipeError(f"{where}.problem: {exc}") from None
