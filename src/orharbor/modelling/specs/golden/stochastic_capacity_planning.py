"""Golden solution: two-stage stochastic capacity planning, expected-cost objective
(extensive-form MIP, SCIP).

Reads capacity.json; writes expected_cost.txt and lines.txt.

First stage: lines[p] integer in 0..max_lines_per_plant, cost line_cost[p] each.
Second stage, for every scenario s: ship[s,p,m] >= 0, short[s,m] >= 0 with
  sum_m ship[s,p,m] <= line_capacity[p] * lines[p]
  sum_p ship[s,p,m] + short[s,m] == demand[s,m]
Objective: sum_p line_cost[p] * lines[p]
         + sum_s probability[s] * (sum unit_cost[p,m] ship[s,p,m] + sum shortage_penalty[m] short[s,m]).

Uniqueness of the line counts: tests/test_spec_library.py enumerates all 5^3 first-stage
decisions and solves each scenario's second-stage LP with scipy; the optimal decision is the only
one reaching the optimum (the next best costs about 204 more).
"""

import json

from ortools.linear_solver import pywraplp

data = json.load(open("capacity.json"))
plants = [p["plant"] for p in data["plants"]]
plant = {p["plant"]: p for p in data["plants"]}
markets = list(data["shortage_penalty"])
unit_cost = {(row["plant"], m): float(row[m]) for row in data["unit_cost"] for m in markets}
scenarios = data["scenarios"]

solver = pywraplp.Solver.CreateSolver("SCIP")
solver.SetNumThreads(1)
inf = solver.infinity()
lines = {p: solver.IntVar(0, data["max_lines_per_plant"], f"lines_{p}") for p in plants}
expected = 0
for s, sc in enumerate(scenarios):
    ship = {(p, m): solver.NumVar(0, inf, f"ship_{s}_{p}_{m}") for p in plants for m in markets}
    short = {m: solver.NumVar(0, inf, f"short_{s}_{m}") for m in markets}
    for p in plants:
        solver.Add(sum(ship[p, m] for m in markets) <= plant[p]["line_capacity"] * lines[p])
    for m in markets:
        solver.Add(sum(ship[p, m] for p in plants) + short[m] == sc["demand"][m])
    recourse = sum(unit_cost[k] * ship[k] for k in ship) + sum(data["shortage_penalty"][m] * short[m] for m in markets)
    expected += sc["probability"] * recourse
solver.Minimize(sum(plant[p]["line_cost"] * lines[p] for p in plants) + expected)
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status

cost = solver.Objective().Value()
counts = [round(lines[p].solution_value()) for p in plants]
print(f"variables={solver.NumVariables()} expected_cost={cost:.6f} lines={counts}")
with open("expected_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
with open("lines.txt", "w") as f:
    f.write(",".join(str(c) for c in counts) + "\n")
