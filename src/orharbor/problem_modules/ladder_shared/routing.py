"""What the cvrp and vrptw ladder programs share: the answer file, nearest customers, and the local search's frame.

Not imported by the package: orharbor.problem_modules.ladder_programs.program puts this file's text first in every
ladder program of a class whose rule.py has the line ``# ladder: shared routing``, so each program stays
one self-contained file. The code after it uses its imports (numpy as np among them) and its names:

- main() reads the instance and writes the routes a function gives for it (both rules, both searches);
- nearest() lists each customer's nearest customers, the granular neighbourhoods of the searches;
- RouteSearch keeps a set of routes with each customer's route and position and each route's load and
  load prefixes, and runs the iterated local search (Lourenco, Martin and Stuetzle 2003, in the Handbook
  of Metaheuristics) over the moves of a class's subclass: its improve(u), ruin_and_recreate(rng) and
  length().
"""

import json
import random
import time
from collections import deque

import numpy as np


def main(instance_path, solution_path, routes_for):
    """Write the routes ``routes_for(instance)`` gives for the instance."""
    with open(instance_path) as f:
        instance = json.load(f)
    routes = routes_for(instance)
    with open(solution_path, "w") as f:
        json.dump({"routes": [[int(c) for c in route] for route in routes]}, f)


def nearest(d, count):
    """near[u]: customer u's ``count`` nearest customers (at most n - 1) by the matrix d, ties by index."""
    k = min(count, len(d) - 2)
    between = d[1:, 1:].copy()
    np.fill_diagonal(between, np.inf if between.dtype.kind == "f" else np.iinfo(between.dtype).max)  # not its own
    return [[]] + (np.argsort(between, axis=1, kind="stable")[:, :k] + 1).tolist()


class RouteSearch:
    """A set of routes with each customer's route and position, and each route's load and load prefixes.

    A subclass gives the moves: improve(u) applies the first improving move for customer u and returns the
    routes it changed, ruin_and_recreate(rng) perturbs the routes and returns the customers that moved, and
    length() is the total distance.
    """

    def __init__(self, routes, d, near, demands, capacity):
        self.d, self.near, self.demands, self.capacity = d, near, demands, capacity
        n = len(demands) - 1
        self.route_of = [0] * (n + 1)
        self.pos = [0] * (n + 1)
        self.upto = [0] * (n + 1)  # load of the route from its start through this customer
        self.set(routes)

    def set(self, routes):
        self.routes = [list(r) for r in routes if r]
        self.load = [0] * len(self.routes)
        for r in range(len(self.routes)):
            self.touch(r)

    def touch(self, r):
        """Recompute positions and loads of route r after a change."""
        total = 0
        for k, c in enumerate(self.routes[r]):
            self.route_of[c], self.pos[c] = r, k
            total += self.demands[c]
            self.upto[c] = total
        self.load[r] = total

    def neighbours(self, c):
        """(previous, next) node of customer c on its route, 0 for the depot."""
        route, k = self.routes[self.route_of[c]], self.pos[c]
        return (route[k - 1] if k else 0), (route[k + 1] if k + 1 < len(route) else 0)

    def local_search(self, customers, deadline):
        """Improve until no move helps any queued customer (customers of changed routes are requeued)."""
        queue = deque(customers)
        queued = set(customers)
        steps = 0
        while queue:
            steps += 1
            if steps % 64 == 0 and time.monotonic() > deadline:
                return
            u = queue.popleft()
            queued.discard(u)
            for r in self.improve(u):
                for c in self.routes[r]:
                    if c not in queued:
                        queued.add(c)
                        queue.append(c)

    def ruin(self, rng, sizes):
        """Remove a random customer and some of its nearest (between sizes[0] and sizes[1] in all, at most n).

        Returns the removed customers in a random order, and the set of them.
        """
        n = len(self.demands) - 1
        seed = rng.randint(1, n)
        count = rng.randint(min(n, sizes[0]), min(n, sizes[1]))
        removed = [seed] + self.near[seed][: count - 1]
        gone = set(removed)
        for r in {self.route_of[c] for c in removed}:
            self.routes[r] = [c for c in self.routes[r] if c not in gone]
            self.touch(r)
        rng.shuffle(removed)
        return removed, gone

    def search(self, deadline):
        """The shortest routes found from the current ones by iterated local search until ``deadline``.

        A local search over all customers in a random order, then kicks: ruin and recreate, a local search
        of the customers that moved, and the result kept if it is no longer than the best routes (else back
        to them). random.Random(0) makes a run with the same number of iterations give the same routes.
        """
        best, best_length = [list(r) for r in self.routes], self.length()
        rng = random.Random(0)
        order = list(range(1, len(self.demands)))
        rng.shuffle(order)
        self.local_search(order, deadline)
        while True:
            length = self.length()
            if length <= best_length:
                best, best_length = [list(r) for r in self.routes if r], length
            else:
                self.set(best)
            if time.monotonic() >= deadline:
                return best
            self.local_search(self.ruin_and_recreate(rng), deadline)
