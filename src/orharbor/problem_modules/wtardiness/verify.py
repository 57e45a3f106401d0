"""Weighted tardiness verifier: standard library only (copied into every task).

``evaluate(instance, solution)`` returns the total weighted tardiness of a job
sequence or raises :class:`Infeasible` naming the first broken rule. The
instance is trusted (it is ours); the solution is not. Linear time.
"""

from __future__ import annotations

from orharbor.verifiers.strict import Infeasible, require_dict, require_int, require_list

__all__ = ["Infeasible", "evaluate", "weighted_tardiness"]


def evaluate(instance: dict, solution) -> int:
    """Total weighted tardiness of ``solution = {"sequence": [job, job, ...]}``."""
    n = instance["n_jobs"]
    require_dict(solution, "solution", ("sequence",))
    sequence = require_list(solution["sequence"], "solution.sequence", n)
    position = [-1] * n
    for k in range(n):
        job = require_int(sequence[k], f"solution.sequence[{k}]", lo=0, hi=n - 1)
        if position[job] >= 0:
            missing = position.index(-1)  # a duplicate in a list of n means some job is missing
            raise Infeasible(
                f"solution.sequence[{k}]: job {job} is already at position {position[job]} "
                f"(every job exactly once; job {missing} is missing)"
            )
        position[job] = k
    return weighted_tardiness(instance, sequence)


def weighted_tardiness(instance: dict, sequence: list[int]) -> int:
    """sum_j w_j max(0, C_j - d_j) for a trusted permutation, from time 0 without idle time."""
    p, w, d = instance["processing_times"], instance["weights"], instance["due_dates"]
    time = 0
    total = 0
    for job in sequence:
        time += p[job]
        if time > d[job]:
            total += w[job] * (time - d[job])
    return total
