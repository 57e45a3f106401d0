"""VRPTW by Solomon's I1 insertion, then iterated local search until a time budget.

1. Start: the rule's routes (Solomon's I1 insertion, the shortest over his four
   parameter settings and both seed rules).
2. Local search, first improvement over granular neighbourhoods (each customer
   u against its NEIGHBOURS nearest customers v, after Toth and Vigo 2003,
   INFORMS Journal on Computing 15, 333-346): relocate u next to v (same or
   another route), swap u and v (different routes), 2-opt* joining u to v
   (exchange the tails of two routes, Potvin and Rousseau 1995), and 2-opt
   within a route (reverse the segment between u and v). A move is applied
   when it shortens the routes and the changed routes keep their capacity,
   time windows and horizon, checked with the verifier's own arithmetic.
3. Iterated local search (Lourenco, Martin and Stuetzle 2003, in the Handbook
   of Metaheuristics) with a ruin-and-recreate kick (Schrimpf et al. 2000,
   Journal of Computational Physics 159, 139-171): remove a random
   customer and some of its nearest customers, reinsert each at the feasible
   place next to one of its nearest customers that adds the least distance (or
   on a new route), run the local search again, and keep the result if it is
   no longer than the current routes (else go back to them). Stops at a share
   of TIME_LIMIT_S; random.Random(0) makes a run with the same number of
   iterations give the same routes. Never worse than the start.

Distances are unrounded Euclidean; the total is summed with math.fsum as the
verifier does.

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
the shared file rule.py names, rule.py without its entry point, then this file).
From the rule it takes Instance and best_i1() for the start. Routes here checks
the time windows of VRPTW's moves, and RouteSearch (ladder_shared/routing.py,
like main() and nearest()) runs steps 2 and 3 over them.
"""

#: The search's clock starts after the program's imports (numpy); SAFETY's margin covers them with the rest of start-up.
START = time.monotonic()

TIME_LIMIT_S = 10.0
#: The search stops at this share of TIME_LIMIT_S; the rest covers start-up and writing.
SAFETY = 0.8
#: Each customer's moves are tried against this many of its nearest customers.
NEIGHBOURS = 20
#: A perturbation removes between these many customers (at most n).
RUIN = (5, 25)
#: A move must shorten the routes by more than this (float sums of square roots).
EPS = 1e-9


class Routes(RouteSearch):
    """VRPTW's moves, applied when they shorten the routes and the changed routes stay feasible."""

    def __init__(self, routes, d, near, instance):
        self.ready, self.due, self.service = instance["ready"], instance["due"], instance["service"]
        self.tol = instance.get("time_tolerance", 1e-6)
        super().__init__(routes, d, near, instance["demands"], instance["capacity"])

    def length(self):
        """Total distance, summed exactly as the verifier does."""
        d = self.d
        return math.fsum(math.fsum(d[a][b] for a, b in zip([0] + route, route + [0])) for route in self.routes if route)

    def on_time(self, route):
        """Whether a route meets every due date and the horizon (the verifier's arithmetic and tolerance)."""
        d, ready, due, service, tol = self.d, self.ready, self.due, self.service, self.tol
        time_, prev = float(ready[0]), 0
        for c in route:
            arrival = time_ + d[prev][c]
            if arrival > due[c] + tol:
                return False
            time_ = max(arrival, ready[c]) + service[c]
            prev = c
        return time_ + d[prev][0] <= due[0] + tol

    def replace(self, changes):
        """Apply {route index: new customers} if every new route is on time; the changed routes, or ()."""
        if not all(self.on_time(route) for route in changes.values()):
            return ()
        for r, route in changes.items():
            self.routes[r] = route
            self.touch(r)
        return tuple(changes)

    def improve(self, u):
        """Apply the first improving feasible move found for u; the routes it changed, or () if none."""
        d, dem, cap = self.d, self.demands, self.capacity
        r1 = self.route_of[u]
        R1 = self.routes[r1]
        i = self.pos[u]
        a, b = self.neighbours(u)
        removal = d[a][u] + d[u][b] - d[a][b]
        for v in self.near[u]:
            r2 = self.route_of[v]
            R2 = self.routes[r2]
            j = self.pos[v]
            c, e = self.neighbours(v)
            if r1 == r2:
                # relocate u after v, then before v, within the route
                for gap, skip, at in (
                    (d[v][u] + d[u][e] - d[v][e], e == u, j + 1),
                    (d[c][u] + d[u][v] - d[c][v], c == u, j),
                ):
                    if not skip and gap < removal - EPS:
                        route = R1[:at] + [u] + R1[at:]
                        del route[i if at > i else i + 1]
                        moved = self.replace({r1: route})
                        if moved:
                            return moved
                # 2-opt: reverse the segment between u and v so that they become neighbours
                if i < j and d[u][v] + d[b][e] < d[u][b] + d[v][e] - EPS:
                    moved = self.replace({r1: R1[: i + 1] + R1[i + 1 : j + 1][::-1] + R1[j + 1 :]})
                elif j < i and d[c][a] + d[v][u] < d[c][v] + d[a][u] - EPS:
                    moved = self.replace({r1: R1[:j] + R1[j:i][::-1] + R1[i:]})
                else:
                    continue
                if moved:
                    return moved
                continue
            shorter = R1[:i] + R1[i + 1 :]
            l1, l2 = self.load[r1], self.load[r2]
            # relocate u after v, then before v, in v's route
            if l2 + dem[u] <= cap:
                for gap, at in ((d[v][u] + d[u][e] - d[v][e], j + 1), (d[c][u] + d[u][v] - d[c][v], j)):
                    if gap < removal - EPS:
                        moved = self.replace({r1: shorter, r2: R2[:at] + [u] + R2[at:]})
                        if moved:
                            return moved
            # swap u and v
            if (
                l1 - dem[u] + dem[v] <= cap
                and l2 - dem[v] + dem[u] <= cap
                and d[a][v] + d[v][b] + d[c][u] + d[u][e] < removal + d[a][b] + d[c][v] + d[v][e] - EPS
            ):
                moved = self.replace({r1: R1[:i] + [v] + R1[i + 1 :], r2: R2[:j] + [u] + R2[j + 1 :]})
                if moved:
                    return moved
            # 2-opt*: u then v's tail (head of r1 + tail of r2 from v, head of r2 + tail of r1 after u)
            p1, p2 = self.upto[u], self.upto[v] - dem[v]
            if p1 + l2 - p2 <= cap and p2 + l1 - p1 <= cap and d[u][v] + d[c][b] < d[u][b] + d[c][v] - EPS:
                moved = self.replace({r1: R1[: i + 1] + R2[j:], r2: R2[:j] + R1[i + 1 :]})
                if moved:
                    return moved
            # 2-opt*: v then u's tail
            p1, p2 = self.upto[u] - dem[u], self.upto[v]
            if p1 + l2 - p2 <= cap and p2 + l1 - p1 <= cap and d[v][u] + d[a][e] < d[a][u] + d[v][e] - EPS:
                moved = self.replace({r1: R1[:i] + R2[j + 1 :], r2: R2[: j + 1] + R1[i:]})
                if moved:
                    return moved
        return ()

    def ruin_and_recreate(self, rng):
        """Remove a random customer and some of its nearest; reinsert each at its cheapest feasible place.

        Returns the customers that moved.
        """
        removed, gone = self.ruin(rng, RUIN)
        d, dem = self.d, self.demands
        for u in removed:
            places = []
            for v in self.near[u]:
                r = self.route_of[v]
                if v in gone or self.load[r] + dem[u] > self.capacity:
                    continue
                c, e = self.neighbours(v)
                places.append((d[v][u] + d[u][e] - d[v][e], v, 1))
                places.append((d[c][u] + d[u][v] - d[c][v], v, 0))
            places.sort()
            placed = False
            for gap, v, after in places:
                if gap >= 2 * d[0][u]:  # a route of its own is shorter
                    break
                r, at = self.route_of[v], self.pos[v] + after
                if self.replace({r: self.routes[r][:at] + [u] + self.routes[r][at:]}):
                    placed = True
                    break
            if not placed:
                self.routes.append([u])
                self.load.append(0)
                self.touch(len(self.routes) - 1)
            gone.discard(u)
        return removed


def solve(instance, deadline):
    inst = Instance(instance)
    near = nearest(inst.d, NEIGHBOURS)
    state = Routes(best_i1(inst), inst.d.tolist(), near, instance)
    return state.search(deadline)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], lambda instance: solve(instance, START + SAFETY * TIME_LIMIT_S))
