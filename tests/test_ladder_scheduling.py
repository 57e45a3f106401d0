"""The calibration-ladder policies of the scheduling classes (jobshop, rcpsp, wtardiness).

Each class ships two level-2 programs in its ``ladder/`` folder: ``rule.py``, a classic
constructive rule, and ``search.py``, a local search started from that rule that stops at the
budget of its ``TIME_LIMIT_S = ...`` line; the search's program is rule.py's code followed by
search.py. They are run here exactly as a task's verifier runs a ``solve.py``, with the search's
budget set small (tests/ladder_runs.py): the answers are feasible, the rule beats the naive
baseline at the benchmark's tier sizes, and the search never ends worse than the rule it starts from.
"""

from __future__ import annotations

import pytest

from ladder_runs import (POLICIES, check_imports, check_search_starts_from_the_rule, check_smallest_size,
                         check_tier_sizes, check_time_limit_line)

#: The benchmark's tier sizes per class (jobshop also Taillard's largest, 100x20).
TIERS = {
    "jobshop": ("15x15", "30x20", "50x20", "100x20"),
    "rcpsp": ("j30", "j60", "j120"),
    "wtardiness": ("n40", "n100"),
}
#: The search's budget in these tests, and the seed of the one instance per tier size.
SEARCH_TIME_LIMIT_S = 1.0
TIER_SEED = 1000


@pytest.mark.parametrize("name", TIERS)
@pytest.mark.parametrize("policy", POLICIES)
def test_imports_only_stdlib_numpy_scipy(name, policy):
    check_imports(name, policy)


@pytest.mark.parametrize("name", TIERS)
def test_search_has_one_time_limit_line(name):
    check_time_limit_line(name)


@pytest.mark.parametrize("name", TIERS)
def test_search_starts_from_the_rule(name):
    check_search_starts_from_the_rule(name)


@pytest.mark.parametrize("name", TIERS)
def test_smallest_size(name, tmp_path):
    check_smallest_size(name, tmp_path, SEARCH_TIME_LIMIT_S)


@pytest.mark.slow
@pytest.mark.parametrize("name", TIERS)
def test_tier_sizes(name, tmp_path):
    check_tier_sizes(name, TIERS[name], TIER_SEED, tmp_path, SEARCH_TIME_LIMIT_S)
