"""What the jobshop and wtardiness ladder searches share: the iterated local search's loop.

Not imported by the package: orharbor.problem_modules.ladder_programs.program puts this file's text first in every
ladder program of a class whose rule.py has the line ``# ladder: shared local_search``, so each program stays
one self-contained file (the rule program carries it unused; the search after the rule runs it). The code after
it uses its imports (random and time) and iterated_local_search(), which runs the loop over a class's own
descent and kick.
"""

import random
import time


def iterated_local_search(start, descend, kick, bound, patience, deadline):
    """Best (solution, value) found from ``start``, a (solution, value) pair, before ``deadline``.

    Iterated local search (Lourenco, Martin and Stuetzle 2003, in the Handbook of Metaheuristics): descend
    from the start to a local optimum, then kick the current local optimum and descend again, until the best
    value reaches ``bound`` (nothing is better) or the deadline passes. A new local optimum replaces the
    current one if it is no worse, and the search goes back to the best one after ``patience`` kicks without
    a new best. ``descend(solution, value)`` gives a (solution, value) no worse than its own (a local optimum,
    or where the deadline stopped it); ``kick(solution, rng)`` a perturbed (solution, value). The kicks draw
    from random.Random(0), so a run with the same number of iterations gives the same answer. The answer is
    never worse than the start.
    """
    rng = random.Random(0)
    current = descend(*start)
    best = min(start, current, key=lambda pair: pair[1])
    stale = 0
    while best[1] > bound and time.monotonic() < deadline:
        trial = descend(*kick(current[0], rng))
        if trial[1] <= current[1]:
            current = trial
        if trial[1] < best[1]:
            best, stale = trial, 0
        else:
            stale += 1
            if stale >= patience:
                current, stale = best, 0
    return best
