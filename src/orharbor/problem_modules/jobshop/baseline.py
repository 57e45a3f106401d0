"""The naive job shop schedule: dispatch of arbitrary job sequences, median of a fixed set.

Why not plain round-robin (0, 1, ..., n-1, 0, 1, ...)? Dispatching that order
keeps every job at the same stage, which is a decent heuristic: random dispatch
sequences are far worse (mean reward about -0.9 against it on 10x10 and 15x15),
so it is not "about as good as a random feasible answer" (DESIGN.md). The
median of a fixed set of pseudo-random sequences is, by construction.
"""

from __future__ import annotations

from .generator import TaillardRng

#: How many fixed pseudo-random sequences the baseline dispatches (odd: one median).
N_SEQUENCES = 31
#: Taillard-LCG seed of sequence i is SEQUENCE_SEED + i.
SEQUENCE_SEED = 1_000_003

BASELINE = (
    "Median random dispatch. A job sequence lists every job index n_machines times; "
    "dispatching it means walking the sequence and appending the named job's next "
    f"operation to the end of its machine's schedule, starting as soon as both the job's "
    f"previous operation and the machine's last operation have finished. The baseline "
    f"dispatches {N_SEQUENCES} fixed pseudo-random shuffles of that multiset (Fisher-Yates "
    f"with Taillard's LCG, seeds {SEQUENCE_SEED} to {SEQUENCE_SEED + N_SEQUENCES - 1}) and "
    "keeps the schedule with the median makespan: feasible by construction, deterministic, "
    "and no attempt to optimise, so it is about as good as a random feasible answer."
)


def dispatch(instance: dict, job_sequence: list[int]) -> dict:
    """Schedule built from ``job_sequence`` (each job exactly ``n_machines`` times).

    Walking the sequence, the next operation of the named job is appended to its
    machine: start = max(end of the job's previous operation, machine's end).
    """
    n, m = instance["n_jobs"], instance["n_machines"]
    machines, durations = instance["machines"], instance["durations"]
    if len(job_sequence) != n * m:
        raise ValueError(f"job_sequence must have {n * m} entries, got {len(job_sequence)}")
    next_op = [0] * n
    job_end = [0] * n
    machine_end = [0] * m
    starts = [[0] * m for _ in range(n)]
    for j in job_sequence:
        k = next_op[j]
        if k >= m:
            raise ValueError(f"job {j} appears more than {m} times in job_sequence")
        machine = machines[j][k]
        start = max(job_end[j], machine_end[machine])
        end = start + durations[j][k]
        starts[j][k] = start
        job_end[j] = end
        machine_end[machine] = end
        next_op[j] = k + 1
    return {"starts": starts}


def round_robin(instance: dict) -> list[int]:
    """The sequence 0, 1, ..., n-1 repeated n_machines times."""
    return [j for _ in range(instance["n_machines"]) for j in range(instance["n_jobs"])]


def random_sequence(instance: dict, lcg_seed: int) -> list[int]:
    """Fisher-Yates shuffle of the round-robin multiset with Taillard's LCG."""
    seq = round_robin(instance)
    rng = TaillardRng(lcg_seed)
    for i in range(len(seq) - 1, 0, -1):
        k = rng.unif(0, i)
        seq[i], seq[k] = seq[k], seq[i]
    return seq


def _makespan(instance: dict, solution: dict) -> int:
    return max(s + d for row, times in zip(solution["starts"], instance["durations"]) for s, d in zip(row, times))


def baseline(instance: dict) -> dict:
    """The median-makespan schedule among the fixed pseudo-random dispatches."""
    scored = []
    for i in range(N_SEQUENCES):
        solution = dispatch(instance, random_sequence(instance, SEQUENCE_SEED + i))
        scored.append((_makespan(instance, solution), i, solution))
    scored.sort(key=lambda t: (t[0], t[1]))
    return scored[N_SEQUENCES // 2][2]
