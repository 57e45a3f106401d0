"""VRPTW by Solomon's I1 insertion heuristic.

Solomon, M.M. (1987) "Algorithms for the vehicle routing and scheduling
problems with time window constraints", Operations Research 35, 254-265.

Routes are built one at a time. A route starts with a seed customer (the
unrouted customer farthest from the depot, or the one with the earliest due
date). Then, for every unrouted customer u, the best feasible place between
consecutive stops i and j of the route minimises
c1 = a1 * (d(i, u) + d(u, j) - mu * d(i, j)) + a2 * (push-forward of j's service start);
the customer to insert maximises c2 = lam * d(0, u) - c1. When no unrouted
customer fits (capacity, time windows, return to the depot), a new route starts.
As Solomon did, the heuristic runs with his four parameter settings
(mu, lam, a1, a2) in {(1, 1, 1, 0), (1, 2, 1, 0), (1, 1, 0, 1), (1, 2, 0, 1)} and
both seed rules, and keeps the shortest of the eight solutions.

A place is feasible when u is reached by its due date and j's service start
stays within j's latest start (the latest time from which the rest of the
route still meets its due dates and the horizon). Times and distances follow
the statement: unrounded Euclidean distances, waiting allowed, no tolerance
used here (the verifier's 1e-6 only adds slack). Deterministic.

It runs as one program with ladder_shared/routing.py before it (orharbor.problem_modules.ladder_programs.program,
from the "# ladder: shared routing" line below): that file imports numpy as np and gives main(),
which reads the instance and writes the answer. Usage: python3 solve.py INSTANCE.json SOLUTION.json
"""

import math
import sys

# ladder: shared routing

SETTINGS = ((1.0, 1.0, 1.0, 0.0), (1.0, 2.0, 1.0, 0.0), (1.0, 1.0, 0.0, 1.0), (1.0, 2.0, 0.0, 1.0))


def distance_matrix(coords):
    """Unrounded Euclidean distances: sqrt of the integer sum of squares, as the verifier computes them."""
    xy = np.array(coords, dtype=np.int64)
    diff = xy[:, None, :] - xy[None, :, :]
    return np.sqrt((diff * diff).sum(axis=2).astype(np.float64))


class Instance:
    """The instance's arrays and Solomon's I1 on them."""

    def __init__(self, instance):
        self.d = distance_matrix(instance["coords"])
        self.demand = np.array(instance["demands"], dtype=np.int64)
        self.ready = np.array(instance["ready"], dtype=np.float64)
        self.due = np.array(instance["due"], dtype=np.float64)
        self.service = np.array(instance["service"], dtype=np.float64)
        self.capacity = instance["capacity"]
        self.n = len(instance["demands"]) - 1

    def schedule(self, stops):
        """Service starts along depot, stops..., depot (the last entry: the return time) and latest starts."""
        d, ready, service = self.d, self.ready, self.service
        start = [float(ready[0])]
        for prev, c in zip(stops, stops[1:]):
            start.append(max(start[-1] + service[prev] + d[prev, c], ready[c]))
        latest = [float(self.due[0])]
        for c, nxt in zip(stops[-2::-1], stops[:0:-1]):
            latest.append(min(self.due[c], latest[-1] - service[c] - d[c, nxt]))
        return np.array(start), np.array(latest[::-1])

    def insertion(self, unrouted, stops, load, setting):
        """For each unrouted customer, c1 and the index of its best feasible place (c1 = inf if none)."""
        mu, _, a1, a2 = setting
        d, u = self.d, unrouted
        start, latest = self.schedule(stops)
        i, j = np.array(stops[:-1]), np.array(stops[1:])
        arrive = start[None, :-1] + self.service[i][None, :] + d[np.ix_(u, i)]
        begin = np.maximum(arrive, self.ready[u][:, None])
        pushed = np.maximum(begin + self.service[u][:, None] + d[np.ix_(u, j)], self.ready[j][None, :])
        c1 = a1 * (d[np.ix_(u, i)] + d[np.ix_(u, j)] - mu * d[i, j][None, :]) + a2 * (pushed - start[None, 1:])
        ok = (arrive <= self.due[u][:, None]) & (pushed <= latest[None, 1:])
        ok &= (load + self.demand[u] <= self.capacity)[:, None]
        c1 = np.where(ok, c1, np.inf)
        place = np.argmin(c1, axis=1)
        return c1[np.arange(len(u)), place], place

    def i1(self, setting, seed_rule):
        """Routes of I1 with one parameter setting and one seed rule."""
        lam = setting[1]
        unrouted = list(range(1, self.n + 1))
        routes = []
        while unrouted:
            key = (lambda c: -self.d[0, c]) if seed_rule == "farthest" else (lambda c: self.due[c])
            seed = min(unrouted, key=lambda c: (key(c), c))
            unrouted.remove(seed)
            stops, load = [0, seed, 0], int(self.demand[seed])
            while unrouted:
                u = np.array(unrouted)
                c1, place = self.insertion(u, stops, load, setting)
                c2 = np.where(np.isfinite(c1), lam * self.d[0, u] - c1, -np.inf)
                best = int(np.argmax(c2))
                if not np.isfinite(c2[best]):
                    break
                customer = unrouted.pop(best)
                stops.insert(int(place[best]) + 1, customer)
                load += int(self.demand[customer])
            routes.append(stops[1:-1])
        return routes

    def length(self, routes):
        return math.fsum(self.d[a, b] for route in routes for a, b in zip([0] + route, route + [0]))


def best_i1(inst):
    """The shortest I1 solution over Solomon's parameter settings and both seed rules."""
    runs = [inst.i1(setting, rule) for setting in SETTINGS for rule in ("farthest", "earliest due")]
    return min(runs, key=inst.length)


def solomon_i1(instance):
    """The rule's routes for ``instance``."""
    return best_i1(Instance(instance))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], solomon_i1)
