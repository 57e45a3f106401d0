"""Published weighted tardiness sets: OR-Library's wt40 and wt100, 125 instances each.

The instances are Crauwels, Potts and Van Wassenhove's (1998). Their OR-Library files ship
unchanged in ``orlib/`` (``orlib/SOURCES.md`` says where they come from and carries the MIT
licence notice). The class's own reader (:mod:`.formats`) reads them. The values come from
OR-Library's value files. ``wtopt40`` holds optima, except instance 19, which is best known only.
``wtbest100b`` holds the best known values (some found by Congram, Potts and van de Velde's
dynasearch), and OR-Library calls none of them optimal. So ``bound`` is the value where OR-Library says it is
optimal, else None.
"""

from __future__ import annotations

from importlib import resources

from .formats import read_all, read_optima

#: Set name -> (jobs per instance, instance file, value file, 1-based instances whose value is proven optimal).
_SETS = {
    "wt40": (40, "wt40.txt", "wtopt40.txt", frozenset(range(1, 126)) - {19}),
    "wt100": (100, "wt100.txt", "wtbest100b.txt", frozenset()),
}
_OPTIMAL = "OR-Library wtopt40: optimal value"
_BEST_KNOWN = {
    "wt40": "OR-Library wtopt40: best known to Crauwels, Potts and Van Wassenhove (1996), not proven optimal",
    "wt100": (
        "OR-Library wtbest100b: best known, with the improvements of Congram, Potts and van de Velde's "
        "(1998) iterated dynasearch; not stated to be optimal"
    ),
}
#: What the agent sees of an instance: the generator's keys, without the generator's record.
_INSTANCE_KEYS = ("problem", "n_jobs", "processing_times", "weights", "due_dates")


def orlib_text(file_name: str) -> str:
    """The text of one shipped OR-Library file (``orlib/<file_name>``)."""
    return resources.files(__package__).joinpath("orlib", file_name).read_text(encoding="ascii")


def orlib_set(set_name: str) -> list[dict]:
    """The entries of one set in order: name, size, instance, source and best known value."""
    n, data_file, value_file, proven = _SETS[set_name]
    instances = read_all(orlib_text(data_file), n=n)
    values = read_optima(orlib_text(value_file))
    if len(instances) != len(values):
        raise ValueError(f"{data_file} holds {len(instances)} instances but {value_file} {len(values)} values")
    out = []
    for number, (read, value) in enumerate(zip(instances, values), 1):
        # The agent's copy does not name the instance: its optimum is published. The row's source keeps the name.
        instance = {key: read[key] for key in _INSTANCE_KEYS}
        instance["name"] = f"wtardiness-n{n}"
        optimal = number in proven
        out.append(
            {
                "name": f"{set_name}_{number:03d}",
                "size": f"n{n}",
                "instance": instance,
                "source": (
                    f"OR-Library {set_name} instance {number} of 125 (Crauwels, Potts and Van Wassenhove 1998), "
                    f"file {data_file}"
                ),
                "best_known": {
                    "value": value,
                    "source": _OPTIMAL if optimal else _BEST_KNOWN[set_name],
                    "bound": value if optimal else None,
                },
            }
        )
    return out


def wt40_set() -> list[dict]:
    """wt40_001-wt40_125 in order: 40 jobs each, with OR-Library's optima (instance 19: best known)."""
    return orlib_set("wt40")


def wt100_set() -> list[dict]:
    """wt100_001-wt100_125 in order: 100 jobs each, with OR-Library's best known values."""
    return orlib_set("wt100")


#: Published sets of this class, by name (see :mod:`orharbor.datasets.published`).
SETS = {"wt40": wt40_set, "wt100": wt100_set}
