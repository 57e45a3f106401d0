"""Published job shop sets that the generator makes exactly: Taillard's ta01-ta80 from his seeds.

The seeds and the best known bounds live in ``taillard.json``, with the source
of each fact; the instances themselves are never stored, because Taillard's
generator (:func:`.generator.taillard`) rebuilds them bit for bit. Each entry's
``best_known`` is in the row's shape: ``value`` the published upper bound,
``bound`` the published lower bound (equal where the optimum is proven).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from .generator import taillard


@cache
def _taillard_table() -> dict:
    return json.loads(resources.files(__package__).joinpath("taillard.json").read_text(encoding="utf-8"))


def taillard_set() -> list[dict]:
    """ta01-ta80 in order: name, size, instance, best known bounds, and where each comes from."""
    table = _taillard_table()
    out = []
    for entry in table["instances"]:
        made = taillard(entry["time_seed"], entry["machine_seed"], entry["n_jobs"], entry["n_machines"])
        # What the agent sees names neither the instance nor its seeds: its bounds are published. The row's
        # source (task.toml, hidden from the agent) keeps them.
        instance = {key: made[key] for key in ("problem", "n_jobs", "n_machines", "machines", "durations")}
        instance["name"] = f"jobshop-{entry['n_jobs']}x{entry['n_machines']}"
        out.append(
            {
                "name": entry["name"],
                "size": f"{entry['n_jobs']}x{entry['n_machines']}",
                "instance": instance,
                "source": (
                    f"Taillard (1993) {entry['name']}: his generator with time seed {entry['time_seed']} and "
                    f"machine seed {entry['machine_seed']}"
                ),
                # the best known makespan is the published upper bound, its bound the published lower bound
                "best_known": {
                    "value": entry["upper_bound"],
                    "source": table["sources"]["bounds"],
                    "bound": entry["lower_bound"],
                },
            }
        )
    return out


#: Published sets of this class, by name (see :mod:`orharbor.datasets.published`).
SETS = {"taillard": taillard_set}
