"""Job shop, local search: iterated descent in the N5 neighbourhood from the Giffler-Thompson/MWKR schedule.

Start: the rule's schedule (Giffler-Thompson with the MWKR priority), read as
one operation sequence per machine. A sequence fixes the schedule: every
operation starts when both its job predecessor and its machine predecessor have
ended. A longest (critical) path then splits into blocks, runs of consecutive
operations on one machine. Neighbourhood N5 (Nowicki and Smutnicki 1996, "A fast
taboo search algorithm for the job shop problem", Management Science 42(6)):
swap the first two or the last two operations of a block (not the first two of
the first block, not the last two of the last one). Such swaps of adjacent
critical operations never create a cycle (van Laarhoven, Aarts and Lenstra
1992). Every neighbour is evaluated by recomputing the whole schedule; the
descent takes the best neighbour while it shortens the makespan. At a local
optimum, a kick of a few random swaps of adjacent critical operations
(neighbourhood N1 of van Laarhoven et al.) restarts the descent (iterated local
search, Lourenco, Martin and Stuetzle 2003); a new local optimum replaces the
current one if it is no longer, and the search goes back to the best one after a
run without improvement. It stops at the time budget or at the lower bound
(longest job or most loaded machine) and writes the best schedule found, never
worse than the rule's.

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
ladder_shared/local_search.py, which rule.py names, rule.py without its entry point, then this file).
From the rule it takes giffler_thompson_mwkr() for the start, and main() to read
the instance and write the answer; the iterated search's loop, and the random and
time modules, come from ladder_shared/local_search.py.
"""

TIME_LIMIT_S = 10.0

#: Fraction of TIME_LIMIT_S used for searching; the rest is the safety margin.
BUDGET_FRACTION = 0.8
#: Random critical swaps in one kick.
KICK_SWAPS = 3
#: Kicks without a new best before going back to the best schedule.
PATIENCE = 50


class JobShop:
    """Operation o = j * m + k is operation k of job j; a solution is one list of operations per machine."""

    def __init__(self, machines, durations):
        self.n, self.m = len(machines), len(machines[0])
        self.machine = [mc for row in machines for mc in row]
        self.duration = [d for row in durations for d in row]

    def sequences(self, starts):
        """Per machine, its operations in the order of ``starts`` (then of their ends, then numbers).

        That order makes every arc, job or machine, go forward, so the sequences have no cycle.
        """
        flat = [s for row in starts for s in row]
        seqs = [[] for _ in range(self.m)]
        for o in sorted(range(len(flat)), key=lambda o: (flat[o], flat[o] + self.duration[o], o)):
            seqs[self.machine[o]].append(o)
        return seqs

    def schedule(self, seqs):
        """(start times, machine predecessors) of the earliest schedule of ``seqs``; None if it has a cycle."""
        size, m, duration = self.n * self.m, self.m, self.duration
        mprev = [-1] * size
        msucc = [-1] * size
        for ops in seqs:
            for a, b in zip(ops, ops[1:]):
                mprev[b], msucc[a] = a, b
        waiting = [(o % m > 0) + (mprev[o] >= 0) for o in range(size)]
        start = [0] * size
        ready = [o for o in range(size) if not waiting[o]]
        done = 0
        while ready:
            o = ready.pop()
            done += 1
            end = start[o] + duration[o]
            for nxt in (o + 1 if o % m < m - 1 else -1, msucc[o]):
                if nxt >= 0:
                    if end > start[nxt]:
                        start[nxt] = end
                    waiting[nxt] -= 1
                    if not waiting[nxt]:
                        ready.append(nxt)
        return (start, mprev) if done == size else None

    def makespan(self, start):
        return max(s + d for s, d in zip(start, self.duration))

    def critical_blocks(self, start, mprev):
        """Blocks of a critical path, first to last: lists of operations consecutive on one machine."""
        duration = self.duration
        o = max(range(len(start)), key=lambda o: start[o] + duration[o])
        path = [o]
        while start[o] > 0:
            p = mprev[o]
            if p >= 0 and start[p] + duration[p] == start[o]:
                o = p
            else:
                o -= 1  # the job predecessor ends at start[o]
            path.append(o)
        path.reverse()
        blocks = [[path[0]]]
        for o in path[1:]:
            if self.machine[o] == self.machine[blocks[-1][-1]]:
                blocks[-1].append(o)
            else:
                blocks.append([o])
        return blocks

    def n5_moves(self, blocks):
        """Pairs (a, b) of adjacent critical operations on one machine whose swap N5 allows."""
        moves = []
        last = len(blocks) - 1
        for i, block in enumerate(blocks):
            if len(block) < 2:
                continue
            if i > 0:
                moves.append((block[0], block[1]))
            if i < last and (len(block) > 2 or i == 0):
                moves.append((block[-2], block[-1]))
        return moves

    def swapped(self, seqs, a, b):
        """A copy of ``seqs`` with a and b (adjacent on their machine, a first) exchanged."""
        seqs = seqs[:]
        ops = seqs[self.machine[a]][:]
        i = ops.index(a)
        ops[i], ops[i + 1] = b, a
        seqs[self.machine[a]] = ops
        return seqs

    def lower_bound(self):
        """The longest job or the most loaded machine: no schedule is shorter."""
        m = self.m
        jobs = [sum(self.duration[j * m : (j + 1) * m]) for j in range(self.n)]
        loads = [0] * m
        for o, d in enumerate(self.duration):
            loads[self.machine[o]] += d
        return max(max(jobs), max(loads))


def descend(shop, seqs, value, deadline):
    """Steepest descent in N5 from ``seqs``: (sequences, makespan) of the local optimum reached."""
    while time.monotonic() < deadline:
        start, mprev = shop.schedule(seqs)
        best = None
        for a, b in shop.n5_moves(shop.critical_blocks(start, mprev)):
            trial = shop.swapped(seqs, a, b)
            result = shop.schedule(trial)
            if result is not None:
                span = shop.makespan(result[0])
                if span < value and (best is None or span < best[1]):
                    best = (trial, span)
        if best is None:
            break
        seqs, value = best
    return seqs, value


def kick(shop, seqs, rng):
    """``seqs`` after up to KICK_SWAPS random swaps of adjacent operations of a critical block.

    A swap that would close a cycle (possible only with zero durations) is skipped.
    """
    result = shop.schedule(seqs)
    for _ in range(KICK_SWAPS):
        pairs = [(a, b) for block in shop.critical_blocks(*result) for a, b in zip(block, block[1:])]
        if not pairs:
            break
        trial = shop.swapped(seqs, *rng.choice(pairs))
        trial_result = shop.schedule(trial)
        if trial_result is not None:
            seqs, result = trial, trial_result
    return seqs, shop.makespan(result[0])


def searched_starts(machines, durations):
    """starts[j][k] of the best schedule the search finds from the rule's before its deadline."""
    deadline = time.monotonic() + BUDGET_FRACTION * TIME_LIMIT_S
    shop = JobShop(machines, durations)
    seqs = shop.sequences(giffler_thompson_mwkr(machines, durations))
    seqs, _ = iterated_local_search(
        (seqs, shop.makespan(shop.schedule(seqs)[0])),
        lambda s, value: descend(shop, s, value, deadline),
        lambda s, rng: kick(shop, s, rng),
        shop.lower_bound(),
        PATIENCE,
        deadline,
    )
    start = shop.schedule(seqs)[0]
    m = shop.m
    return [start[j * m : (j + 1) * m] for j in range(shop.n)]


if __name__ == "__main__":
    main(searched_starts)
