"""CVRP by Clarke-Wright savings, then iterated local search until a time budget.

1. Start: the rule's routes (Clarke-Wright parallel savings).
2. Local search, first improvement over granular neighbourhoods (each customer
   u against its NEIGHBOURS nearest customers v, after Toth and Vigo 2003,
   INFORMS Journal on Computing 15, 333-346): relocate u next to v (same or
   another route), swap u and v (different routes), 2-opt* joining u to v
   (exchange the tails of two routes, Potvin and Rousseau 1995), and 2-opt
   within a route (reverse the segment between u and v). Only moves that
   lower the distance and keep every load within the capacity are applied.
3. Iterated local search (Lourenco, Martin and Stuetzle 2003, in the Handbook
   of Metaheuristics) with a ruin-and-recreate kick (Schrimpf et al. 2000,
   Journal of Computational Physics 159, 139-171): remove a random
   customer and some of its nearest customers, reinsert each where it adds the
   least distance next to one of its nearest customers (or on a new route),
   run the local search again, and keep the result if it is no longer than
   the current routes (else go back to them). Stops at a share of
   TIME_LIMIT_S; random.Random(0) makes a run with the same number of
   iterations give the same routes. Never worse than the start.

Distances are the statement's: Euclidean rounded to the nearest integer
("nint"), or the instance's matrix ("explicit").

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
the shared file rule.py names, rule.py without its entry point, then this file).
From the rule it takes distance_matrix() and savings_routes() for the start. Its
Routes gives CVRP's moves to RouteSearch of ladder_shared/routing.py, which runs
steps 2 and 3 over them; main() and nearest() come from that file too.
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


class Routes(RouteSearch):
    """CVRP's moves, applied when they shorten the routes and keep every load within the capacity."""

    def length(self):
        d, total = self.d, 0
        for route in self.routes:
            if route:
                total += d[0][route[0]] + d[route[-1]][0]
                total += sum(d[a][b] for a, b in zip(route, route[1:]))
        return total

    def improve(self, u):
        """Apply the first improving move found for u; the routes it changed, or () if none."""
        d, dem, cap = self.d, self.demands, self.capacity
        r1 = self.route_of[u]
        a, b = self.neighbours(u)
        removal = d[a][u] + d[u][b] - d[a][b]
        for v in self.near[u]:
            r2 = self.route_of[v]
            c, e = self.neighbours(v)
            fits = r1 == r2 or self.load[r2] + dem[u] <= cap
            # relocate u after v (between v and e), then before v (between c and v)
            if fits and e != u and d[v][u] + d[u][e] - d[v][e] < removal:
                return self.relocate(u, v, 1)
            if fits and c != u and d[c][u] + d[u][v] - d[c][v] < removal:
                return self.relocate(u, v, 0)
            if r1 == r2:
                # 2-opt: reverse the segment between u and v so that they become neighbours
                i, j = self.pos[u], self.pos[v]
                if i < j and d[u][v] + d[b][e] < d[u][b] + d[v][e]:
                    return self.reverse(r1, i + 1, j + 1)
                if j < i and d[c][a] + d[v][u] < d[c][v] + d[a][u]:
                    return self.reverse(r1, j, i)
                continue
            l1, l2 = self.load[r1], self.load[r2]
            # swap u and v
            if (
                l1 - dem[u] + dem[v] <= cap
                and l2 - dem[v] + dem[u] <= cap
                and d[a][v] + d[v][b] + d[c][u] + d[u][e] < removal + d[a][b] + d[c][v] + d[v][e]
            ):
                return self.swap(u, v)
            # 2-opt*: u then v's tail (head of r1 + tail of r2 from v, head of r2 + tail of r1 after u)
            p1, p2 = self.upto[u], self.upto[v] - dem[v]
            if p1 + l2 - p2 <= cap and p2 + l1 - p1 <= cap and d[u][v] + d[c][b] < d[u][b] + d[c][v]:
                return self.cross(r1, self.pos[u] + 1, r2, self.pos[v])
            # 2-opt*: v then u's tail
            p1, p2 = self.upto[u] - dem[u], self.upto[v]
            if p1 + l2 - p2 <= cap and p2 + l1 - p1 <= cap and d[v][u] + d[a][e] < d[a][u] + d[v][e]:
                return self.cross(r1, self.pos[u], r2, self.pos[v] + 1)
        return ()

    def relocate(self, u, v, after):
        r1, r2 = self.route_of[u], self.route_of[v]
        self.routes[r1].remove(u)
        target = self.routes[r2]
        target.insert(target.index(v) + after, u)
        self.touch(r1)
        self.touch(r2)
        return (r1, r2)

    def reverse(self, r, i, j):
        route = self.routes[r]
        route[i:j] = route[i:j][::-1]
        self.touch(r)
        return (r,)

    def swap(self, u, v):
        r1, r2 = self.route_of[u], self.route_of[v]
        self.routes[r1][self.pos[u]], self.routes[r2][self.pos[v]] = v, u
        self.touch(r1)
        self.touch(r2)
        return (r1, r2)

    def cross(self, r1, i, r2, j):
        """Route r1 keeps its first i customers then takes r2's from j on, and the other way round."""
        first, second = self.routes[r1], self.routes[r2]
        self.routes[r1], self.routes[r2] = first[:i] + second[j:], second[:j] + first[i:]
        self.touch(r1)
        self.touch(r2)
        return (r1, r2)

    def ruin_and_recreate(self, rng):
        """Remove a random customer and some of its nearest; reinsert each at its cheapest place.

        Returns the customers that moved.
        """
        removed, gone = self.ruin(rng, RUIN)
        d, dem = self.d, self.demands
        for u in removed:
            best = (2 * d[0][u], 0, 0)  # v = 0: a new route
            for v in self.near[u]:
                if v in gone:
                    continue
                r = self.route_of[v]
                if self.load[r] + dem[u] > self.capacity:
                    continue
                c, e = self.neighbours(v)
                best = min(best, (d[v][u] + d[u][e] - d[v][e], v, 1), (d[c][u] + d[u][v] - d[c][v], v, 0))
            _, v, after = best
            if v == 0:
                self.routes.append([u])
                self.load.append(0)
                self.touch(len(self.routes) - 1)
            else:
                r = self.route_of[v]
                self.routes[r].insert(self.pos[v] + after, u)
                self.touch(r)
            gone.discard(u)
        return removed


def solve(instance, deadline):
    demands, capacity = instance["demands"], instance["capacity"]
    matrix = distance_matrix(instance)
    near = nearest(matrix, NEIGHBOURS)
    state = Routes(savings_routes(matrix, demands, capacity), matrix.tolist(), near, demands, capacity)
    return state.search(deadline)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], lambda instance: solve(instance, START + SAFETY * TIME_LIMIT_S))
