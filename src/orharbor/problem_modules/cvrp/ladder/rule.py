"""CVRP by the Clarke-Wright savings algorithm, parallel version.

Clarke, G. and Wright, J.W. (1964) "Scheduling of vehicles from a central
depot to a number of delivery points", Operations Research 12, 568-581.

Every customer starts on a route of its own. The saving of serving customers
i and j on one route instead of two is s(i, j) = d(0, i) + d(0, j) - d(i, j).
The pairs are taken by decreasing saving (ties by index); a pair with a
positive saving merges the two routes when i and j are on different routes,
both are at an end of their route (next to the depot), and the merged load
fits the capacity. Distances are the statement's: Euclidean rounded to the
nearest integer ("nint"), or the instance's matrix ("explicit").
Deterministic; O(n^2 log n).

It runs as one program with ladder_shared/routing.py before it (orharbor.problem_modules.ladder_programs.program,
from the "# ladder: shared routing" line below): that file imports numpy as np and gives main(),
which reads the instance and writes the answer. Usage: python3 solve.py INSTANCE.json SOLUTION.json
"""

import sys

# ladder: shared routing


def distance_matrix(instance):
    """d(i, j) for nodes 0..n as the verifier computes it (int(sqrt(dx^2 + dy^2) + 0.5) for "nint")."""
    if instance["rounding"] == "explicit":
        return np.array(instance["distances"], dtype=np.int64)
    xy = np.array(instance["coords"], dtype=np.int64)
    diff = xy[:, None, :] - xy[None, :, :]
    squared = (diff * diff).sum(axis=2).astype(np.float64)
    return np.floor(np.sqrt(squared) + 0.5).astype(np.int64)


def savings_routes(d, demands, capacity):
    """Clarke-Wright parallel savings routes, each a list of customers."""
    n = len(demands) - 1
    i, j = np.triu_indices(n, k=1)
    i, j = i + 1, j + 1
    saving = d[0, i] + d[0, j] - d[i, j]
    order = np.lexsort((j, i, -saving))  # decreasing saving, then by (i, j)
    order = order[saving[order] > 0]
    route_of = list(range(n + 1))  # route id of each customer (its first customer's id at creation)
    routes = {c: [c] for c in range(1, n + 1)}
    load = {c: demands[c] for c in range(1, n + 1)}
    for a, b in zip(i[order].tolist(), j[order].tolist()):
        ra, rb = route_of[a], route_of[b]
        if ra == rb or load[ra] + load[rb] > capacity:
            continue
        first, second = routes[ra], routes[rb]
        if first[-1] != a:  # put a at the end of its route
            if first[0] != a:
                continue
            first.reverse()
        if second[0] != b:  # and b at the start of its own
            if second[-1] != b:
                continue
            second.reverse()
        first.extend(second)
        load[ra] += load.pop(rb)
        for c in routes.pop(rb):
            route_of[c] = ra
    return list(routes.values())


def clarke_wright(instance):
    """The rule's routes for ``instance``."""
    return savings_routes(distance_matrix(instance), instance["demands"], instance["capacity"])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], clarke_wright)
