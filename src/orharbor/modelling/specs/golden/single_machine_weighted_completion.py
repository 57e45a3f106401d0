"""Golden solution: one machine, release dates, total weighted completion time (big-M MIP, SCIP).

The job data is stated in the task description (no data files). Writes
weighted_completion.txt and sequence.txt.

Model: start[j] >= release[j]; for every pair j < k a binary before[j,k] and the disjunction
  start[j] + p[j] <= start[k] + M * (1 - before[j,k])
  start[k] + p[k] <= start[j] + M * before[j,k]
with M = max release + sum of processing times; minimise sum w[j] * (start[j] + p[j]).

Uniqueness: with positive weights, every schedule is dominated by the left-shifted schedule of
its job order, so optimal schedules correspond to optimal orders. Enumerating all 8! orders
(tests/test_spec_library.py) finds exactly one order attaining the optimum; the next best order
costs 2 more.
"""

from ortools.linear_solver import pywraplp

jobs = ["J1", "J2", "J3", "J4", "J5", "J6", "J7", "J8"]
processing = dict(zip(jobs, [14, 9, 12, 9, 5, 9, 14, 14]))
release = dict(zip(jobs, [11, 38, 25, 22, 12, 22, 24, 38]))
weight = dict(zip(jobs, [2, 4, 2, 2, 2, 4, 2, 5]))
big_m = max(release.values()) + sum(processing.values())

solver = pywraplp.Solver.CreateSolver("SCIP")
solver.SetNumThreads(1)
start = {j: solver.NumVar(release[j], big_m, f"start_{j}") for j in jobs}
for a, j in enumerate(jobs):
    for k in jobs[a + 1 :]:
        before = solver.BoolVar(f"before_{j}_{k}")
        solver.Add(start[j] + processing[j] <= start[k] + big_m * (1 - before))
        solver.Add(start[k] + processing[k] <= start[j] + big_m * before)
solver.Minimize(sum(weight[j] * (start[j] + processing[j]) for j in jobs))
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status

total = solver.Objective().Value()
sequence = sorted(jobs, key=lambda j: start[j].solution_value())
print(f"variables={solver.NumVariables()} total={total:.4f} sequence={sequence}")
with open("weighted_completion.txt", "w") as f:
    f.write(f"{round(total)}\n")
with open("sequence.txt", "w") as f:
    f.write(",".join(sequence) + "\n")
