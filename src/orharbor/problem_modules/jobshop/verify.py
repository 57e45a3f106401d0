"""Job shop verifier: standard library only (copied into every task).

``evaluate(instance, solution)`` returns the makespan of a feasible schedule
or raises :class:`Infeasible` naming the first broken rule. The instance is
trusted (it is ours); the solution is not.
"""

from __future__ import annotations

from orharbor.verifiers.strict import Infeasible, require_dict, require_int, require_list

__all__ = ["Infeasible", "evaluate"]


def evaluate(instance: dict, solution) -> int:
    """Makespan of ``solution = {"starts": [[start of operation k of job j]]}``."""
    n, m = instance["n_jobs"], instance["n_machines"]
    machines, durations = instance["machines"], instance["durations"]
    require_dict(solution, "solution", ("starts",))
    starts = require_list(solution["starts"], "solution.starts", n)
    for j in range(n):
        row = require_list(starts[j], f"solution.starts[{j}]", m)
        for k in range(m):
            require_int(row[k], f"solution.starts[{j}][{k}]", lo=0)

    # Each job: its operations in the given order, none before its predecessor ends.
    makespan = 0
    for j in range(n):
        row, times = starts[j], durations[j]
        ready = 0
        for k in range(m):
            if row[k] < ready:
                raise Infeasible(f"job {j} operation {k} starts at {row[k]} before its predecessor ends at {ready}")
            ready = row[k] + times[k]
        makespan = max(makespan, ready)

    # Each machine: one operation at a time (zero-length operations occupy no time).
    on_machine: list[list[tuple[int, int, int, int]]] = [[] for _ in range(m)]
    for j in range(n):
        for k in range(m):
            if durations[j][k] > 0:
                s = starts[j][k]
                on_machine[machines[j][k]].append((s, s + durations[j][k], j, k))
    for machine, ops in enumerate(on_machine):
        ops.sort()
        for (s0, e0, j0, k0), (s1, e1, j1, k1) in zip(ops, ops[1:]):
            if s1 < e0:
                raise Infeasible(
                    f"machine {machine}: job {j0} operation {k0} [{s0}, {e0}) "
                    f"overlaps job {j1} operation {k1} [{s1}, {e1})"
                )
    return makespan
