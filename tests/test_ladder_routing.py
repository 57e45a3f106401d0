"""The calibration-ladder policies of cvrp and vrptw: ladder/rule.py, and ladder/search.py after it.

Each program is a level-2 ``solve.py``, run here as a task runs it (tests/ladder_runs.py), with
the search's ``TIME_LIMIT_S`` line set to a short budget. No assertion depends on how many
iterations the search gets in that budget: it must write a feasible answer no longer than the
rule's, whatever the machine's load.
"""

from __future__ import annotations

import pytest

from ladder_runs import (POLICIES, check_imports, check_search_starts_from_the_rule, check_smallest_size,
                         check_tier_sizes, check_time_limit_line)

CLASSES = ("cvrp", "vrptw")
#: The benchmark's tier sizes per class.
TIERS = {"cvrp": ("n100", "n200", "n400"), "vrptw": ("n100", "n200")}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", CLASSES)
def test_imports_only_stdlib_numpy_scipy(name, policy):
    check_imports(name, policy)


@pytest.mark.parametrize("name", CLASSES)
def test_search_has_one_time_limit_line(name):
    check_time_limit_line(name)


@pytest.mark.parametrize("name", CLASSES)
def test_search_starts_from_the_rule(name):
    check_search_starts_from_the_rule(name)


@pytest.mark.parametrize("name", CLASSES)
def test_smallest_size(name, tmp_path):
    check_smallest_size(name, tmp_path, 0.5)


@pytest.mark.slow
@pytest.mark.parametrize("name", CLASSES)
def test_tier_sizes(name, tmp_path):
    check_tier_sizes(name, TIERS[name], 0, tmp_path, 1.0)
