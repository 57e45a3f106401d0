"""Weighted tardiness, local search: interchange and insertion descent from the ATC sequence, iterated.

Start: the rule's sequence (apparent tardiness cost, best over a small grid of
its look-ahead parameter). Descent: adjacent pairwise interchange (swap two
neighbours), then insertion (take one job out and put it back at the best other
position), repeated while either improves; the neighbourhoods of the local
search study of Crauwels, Potts and Van Wassenhove (1998, "Local search
heuristics for the single machine total weighted tardiness scheduling problem",
INFORMS Journal on Computing 10). Insertion moves are evaluated incrementally:
moving a job shifts only the jobs it passes, so all positions for one job cost
O(n) together. At a local optimum, a kick of a few random interchanges restarts
the descent (iterated local search, Lourenco, Martin and Stuetzle 2003); a new
local optimum replaces the current one if it is no worse, and the search goes
back to the best one after a run without improvement. It stops at the time
budget or at zero, and writes the best sequence found, never worse than the
rule's.

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
ladder_shared/local_search.py, which rule.py names, rule.py without its entry point, then this file).
From the rule it takes atc() for the start and total_weighted_tardiness() to score
sequences, and main() to read the instance and write the answer; the iterated
search's loop, and the random and time modules, come from ladder_shared/local_search.py.
"""

TIME_LIMIT_S = 10.0

#: Fraction of TIME_LIMIT_S used for searching; the rest is the safety margin.
BUDGET_FRACTION = 0.8
#: Random interchanges in one kick.
KICK_SWAPS = 3
#: Kicks without a new best before going back to the best sequence.
PATIENCE = 100


def interchange_pass(p, w, d, seq):
    """One sweep of improving adjacent interchanges over ``seq`` (in place); True if any was made."""
    improved = False
    time = 0  # start of position i
    for i in range(len(seq) - 1):
        a, b = seq[i], seq[i + 1]
        before = w[a] * max(0, time + p[a] - d[a]) + w[b] * max(0, time + p[a] + p[b] - d[b])
        after = w[b] * max(0, time + p[b] - d[b]) + w[a] * max(0, time + p[a] + p[b] - d[a])
        if after < before:
            seq[i], seq[i + 1] = b, a
            improved = True
        time += p[seq[i]]
    return improved


def best_insertion(p, w, d, seq, a):
    """(gain, position) of the best reinsertion of the job at position ``a`` of ``seq``."""
    completions = []
    time = 0
    for j in seq:
        time += p[j]
        completions.append(time)
    x = seq[a]
    px, wx, dx = p[x], w[x], d[x]
    here = wx * max(0, completions[a] - dx)
    best_gain, best_pos = 0, a
    shift = 0  # change of cost of the jobs x passes
    for b in range(a + 1, len(seq)):  # later: the jobs of positions a+1..b end px earlier
        j, c = seq[b], completions[b]
        shift += w[j] * (max(0, c - px - d[j]) - max(0, c - d[j]))
        gain = here - wx * max(0, c - dx) - shift
        if gain > best_gain:
            best_gain, best_pos = gain, b
    shift = 0
    for b in range(a - 1, -1, -1):  # earlier: the jobs of positions b..a-1 end px later
        j, c = seq[b], completions[b]
        shift += w[j] * (max(0, c + px - d[j]) - max(0, c - d[j]))
        gain = here - wx * max(0, c - p[j] + px - dx) - shift
        if gain > best_gain:
            best_gain, best_pos = gain, b
    return best_gain, best_pos


def descend(p, w, d, seq, deadline):
    """Local optimum for interchange and insertion reached from ``seq`` (a new list), or where the deadline stops it."""
    seq = seq[:]
    improved = True
    while improved:
        while interchange_pass(p, w, d, seq):
            pass
        improved = False
        for job in list(seq):
            if time.monotonic() >= deadline:
                return seq
            a = seq.index(job)
            gain, b = best_insertion(p, w, d, seq, a)
            if gain > 0:
                seq.insert(b, seq.pop(a))
                improved = True
    return seq


def kick(seq, rng):
    """A copy of ``seq`` with KICK_SWAPS random pairs of jobs exchanged."""
    seq = seq[:]
    for _ in range(KICK_SWAPS):
        i, j = rng.randrange(len(seq)), rng.randrange(len(seq))
        seq[i], seq[j] = seq[j], seq[i]
    return seq


def searched_sequence(p, w, d):
    """The best sequence the search finds from the rule's before its deadline."""
    deadline = time.monotonic() + BUDGET_FRACTION * TIME_LIMIT_S

    def scored(seq):
        return seq, total_weighted_tardiness(p, w, d, seq)

    sequence, _ = iterated_local_search(
        scored(atc(p, w, d)),
        lambda seq, _: scored(descend(p, w, d, seq, deadline)),
        lambda seq, rng: scored(kick(seq, rng)),
        0,
        PATIENCE,
        deadline,
    )
    return sequence


if __name__ == "__main__":
    main(searched_sequence)
