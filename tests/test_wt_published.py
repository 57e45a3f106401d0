"""OR-Library's wt40 and wt100 as published sets of wtardiness: the shipped files, instances and values.

The ``instances_dir`` tests compare the shipped files with ../shared/data; tests/conftest.py marks them
``published``.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from orharbor import problem_modules
from orharbor.benchmark.recipe import parse_recipe
from orharbor.datasets.published import UnknownPublishedSet, expand_names, published_rows, published_set
from orharbor.problem_modules.wtardiness.generator import P_RANGE, W_RANGE, generate
from orharbor.problem_modules.wtardiness.published import SETS, orlib_text
from orharbor.problem_modules.wtardiness.reference import best_rule
from orharbor.problem_modules.wtardiness.verify import weighted_tardiness

wt = problem_modules.get("wtardiness")
#: set -> (jobs per instance, instance file, value file)
FILES = {"wt40": (40, "wt40.txt", "wtopt40.txt"), "wt100": (100, "wt100.txt", "wtbest100b.txt")}


def shipped_bytes(name: str) -> bytes:
    return resources.files("orharbor.problem_modules.wtardiness").joinpath("orlib", name).read_bytes()


@pytest.fixture(scope="module")
def entries() -> dict[str, list[dict]]:
    return {name: make() for name, make in SETS.items()}


@pytest.mark.parametrize("name", ["wt40.txt", "wtopt40.txt"])
def test_shipped_files_are_the_published_fixture_byte_for_byte(instances_dir, name):
    assert shipped_bytes(name) == (instances_dir / "wtardiness" / name).read_bytes()


@pytest.mark.parametrize("set_name", list(FILES))
def test_reader_round_trips_the_shipped_file(set_name):
    text = orlib_text(FILES[set_name][1])
    assert wt.write(wt.read(text, n=FILES[set_name][0])) == text


@pytest.mark.parametrize("set_name", list(FILES))
def test_125_valid_instances_of_the_class_size_that_do_not_name_themselves(entries, set_name):
    n = FILES[set_name][0]
    assert [entry["name"] for entry in entries[set_name]] == [f"{set_name}_{k:03d}" for k in range(1, 126)]
    generated = generate(0, f"n{n}")
    for number, entry in enumerate(entries[set_name], 1):
        instance = entry["instance"]
        assert entry["size"] == f"n{n}" and entry["size"] in wt.SIZES
        assert wt.validate_instance(instance) is instance and instance["n_jobs"] == n
        # the generator's keys, without its record; the name says only the class and size
        assert set(instance) == set(generated) - {"generator"}
        assert instance["name"] == generated["name"].rsplit("-", 1)[0]
        assert set_name not in json.dumps(instance)
        assert entry["source"].startswith(f"OR-Library {set_name} instance {number} of 125 ")


@pytest.mark.parametrize("set_name", list(FILES))
def test_instances_are_the_files_integers_in_order_and_follow_the_design(entries, set_name):
    """An independent parse: 3 n integers per instance (times, weights, due dates), in the design's ranges."""
    n, data_file, _ = FILES[set_name]
    values = [int(token) for token in shipped_bytes(data_file).split()]
    assert len(values) == 125 * 3 * n
    for k, entry in enumerate(entries[set_name]):
        block = values[k * 3 * n : (k + 1) * 3 * n]
        instance = entry["instance"]
        assert instance["processing_times"] == block[:n]
        assert instance["weights"] == block[n : 2 * n]
        assert instance["due_dates"] == block[2 * n :]
        assert all(P_RANGE[0] <= p <= P_RANGE[1] for p in instance["processing_times"])
        assert all(W_RANGE[0] <= w <= W_RANGE[1] for w in instance["weights"])


@pytest.mark.parametrize("set_name", list(FILES))
def test_best_known_values_in_order_with_a_bound_only_where_proven(entries, set_name):
    values = [int(token) for token in shipped_bytes(FILES[set_name][2]).split()]
    assert [entry["best_known"]["value"] for entry in entries[set_name]] == values
    for number, entry in enumerate(entries[set_name], 1):
        known = entry["best_known"]
        assert set(known) == {"value", "source", "bound"} and known["source"].startswith("OR-Library ")
        # OR-Library: every wt40 value is optimal but instance 19's; no wt100 value is called optimal
        proven = set_name == "wt40" and number != 19
        assert known["bound"] == (known["value"] if proven else None)
        # any sequence costs at least the optimum: a cheap check that instance and value belong together
        if proven:
            assert weighted_tardiness(entry["instance"], best_rule(entry["instance"])) >= known["value"]


def test_wt40_instances_1_and_3_have_the_optima_that_shared_sources_state(entries):
    assert entries["wt40"][0]["best_known"]["value"] == entries["wt40"][0]["best_known"]["bound"] == 913
    assert entries["wt40"][2]["best_known"]["value"] == entries["wt40"][2]["best_known"]["bound"] == 537


@pytest.mark.parametrize(("set_name", "number"), [("wt40", 1), ("wt40", 3), ("wt40", 19), ("wt100", 1)])
def test_cpsat_never_beats_a_published_optimum_nor_proves_a_bound_above_a_best_known(entries, set_name, number):
    """At any time limit: CP-SAT's bound is at most the optimum, which is at most any value found."""
    entry = entries[set_name][number - 1]
    solution, meta = wt.reference(entry["instance"], time_limit_s=1.0, workers=1)
    objective = wt.evaluate(entry["instance"], solution)
    assert meta["objective"] == objective and meta["bound"] <= entry["best_known"]["value"]
    if entry["best_known"]["bound"] is not None:
        assert objective >= entry["best_known"]["bound"]


def test_expand_names_takes_ranges_of_the_new_names():
    assert expand_names("wtardiness", "wt40", ["wt40_009-wt40_011", "wt40_125"]) == [
        "wt40_009",
        "wt40_010",
        "wt40_011",
        "wt40_125",
    ]
    assert expand_names("wtardiness", "wt100", None) == [f"wt100_{k:03d}" for k in range(1, 126)]
    assert len(expand_names("wtardiness", "wt100", ["wt100_001-wt100_125"])) == 125
    for bad in (["wt40_126"], ["wt40_001-wt40_126"], ["wt100_001"]):
        with pytest.raises(UnknownPublishedSet):
            expand_names("wtardiness", "wt40", bad)


def test_published_rows_carry_the_entry_and_a_valid_row_id():
    schema = json.loads(resources.files("orharbor.datasets").joinpath("row_schema.json").read_text())
    id_pattern = schema["properties"]["id"]["pattern"]
    (row,) = published_rows("wtardiness", "wt100", ["wt100_007"], 1.0)
    entry = published_set("wtardiness", "wt100")["wt100_007"]
    assert row["id"] == "wtardiness-wt100_007-l1" and re.fullmatch(id_pattern, row["id"])
    assert (row["size"], row["instance"], row["best_known"]) == (entry["size"], entry["instance"], entry["best_known"])


RECIPE = """
name = "wt-bench"
version = "0.1"
[build]
reference_time_limit_s = 1.0
solver_workers = 1
start_seed = 1000
min_gap = 0.0
eval_instances = 1
[export]
[[published]]
problem = "wtardiness"
set = "wt40"
names = ["wt40_001-wt40_005", "wt40_019"]
agent_timeout_s = 600
[[tiers]]
problem = "wtardiness"
size = "n40"
level1_rows = 1
level2_rows = 0
solve_time_limit_s = 5
agent_timeout_s = 600
"""


def test_a_recipe_naming_wt40_parses():
    recipe = parse_recipe(RECIPE, "wt-recipe")
    (part,) = [part for part in recipe.parts if part.plan.published]
    assert part.name == "wtardiness-wt40" and part.plan.published == "wt40"
    assert part.plan.names == ("wt40_001", "wt40_002", "wt40_003", "wt40_004", "wt40_005", "wt40_019")


def test_orharbor_bench_1_1_takes_wt_instances_every_answer_does_not_tie_on():
    """1.1's OR-Library instances: none with optimum 0 (the rule reaches it, and every good answer ties), and one
    per due-date range (the set's blocks of 25) at five different tardiness factors (blocks of 5 within)."""
    from orharbor.benchmark.recipe import load_recipe
    from orharbor.datasets.published import published_set

    parts = [
        part
        for part in load_recipe("orharbor-bench-1.1").parts
        if part.plan.problem == "wtardiness" and part.plan.published
    ]
    assert sorted(part.plan.published for part in parts) == ["wt100", "wt40"]
    for part in parts:
        entries = published_set("wtardiness", part.plan.published)
        assert all(entries[name]["best_known"]["value"] > 0 for name in part.plan.names), part.plan.names
        numbers = [int(name.split("_")[1]) - 1 for name in part.plan.names]
        assert sorted(n // 25 for n in numbers) == [0, 1, 2, 3, 4]
        assert sorted(n % 25 // 5 for n in numbers) == [0, 1, 2, 3, 4]
