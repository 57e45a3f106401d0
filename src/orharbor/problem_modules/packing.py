"""Next-fit packing of an ordered sequence: the CVRP baseline's routes and the timetabling generator's cohorts."""

from __future__ import annotations

from typing import Callable


def next_fit(order: list[int], size: Callable[[int], int], capacity: int) -> list[list[int]]:
    """``order`` cut into consecutive groups of total size at most ``capacity`` (a bigger item stands alone).

    An item joins the current group while the group's total stays within
    ``capacity``; otherwise the group closes and the item starts the next one.
    """
    groups: list[list[int]] = []
    group: list[int] = []
    load = 0
    for item in order:
        if group and load + size(item) > capacity:
            groups.append(group)
            group, load = [], 0
        group.append(item)
        load += size(item)
    if group:
        groups.append(group)
    return groups
