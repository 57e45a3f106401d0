"""Golden solution: capacitated facility location with single sourcing (MIP, SCIP).

Reads sites.csv, customers.csv and unit_costs.csv; writes total_cost.txt and open_sites.txt.

Model: open[s] binary, assign[c,s] binary (customer c served entirely by site s).
  sum_s assign[c,s] = 1                       for every customer
  sum_c demand[c] * assign[c,s] <= capacity[s] * open[s]
  assign[c,s] <= open[s]                      (tightening)
  minimise sum fixed[s] * open[s] + sum demand[c] * unit_cost[c,s] * assign[c,s]

Uniqueness of the set of open sites: re-solving with a no-good cut that excludes the optimal set
of open sites gives a strictly larger cost (see tests/test_spec_library.py, which does this with
an independent scipy.optimize.milp formulation).
"""

import csv

from ortools.linear_solver import pywraplp


def read(name):
    with open(name, newline="") as f:
        return list(csv.DictReader(f))


sites = read("sites.csv")
customers = read("customers.csv")
unit_cost = {row["customer"]: row for row in read("unit_costs.csv")}
S = [r["site"] for r in sites]
C = [r["customer"] for r in customers]
fixed = {r["site"]: float(r["fixed_cost"]) for r in sites}
capacity = {r["site"]: float(r["capacity"]) for r in sites}
demand = {r["customer"]: float(r["demand"]) for r in customers}

solver = pywraplp.Solver.CreateSolver("SCIP")
solver.SetNumThreads(1)
is_open = {s: solver.BoolVar(f"open_{s}") for s in S}
assign = {(c, s): solver.BoolVar(f"x_{c}_{s}") for c in C for s in S}
for c in C:
    solver.Add(sum(assign[c, s] for s in S) == 1)
    for s in S:
        solver.Add(assign[c, s] <= is_open[s])
for s in S:
    solver.Add(sum(demand[c] * assign[c, s] for c in C) <= capacity[s] * is_open[s])
solver.Minimize(
    sum(fixed[s] * is_open[s] for s in S) + sum(demand[c] * float(unit_cost[c][s]) * assign[c, s] for c in C for s in S)
)
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status

cost = solver.Objective().Value()
opened = sorted(s for s in S if is_open[s].solution_value() > 0.5)
print(f"variables={solver.NumVariables()} cost={cost:.6f} open={opened}")
with open("total_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
with open("open_sites.txt", "w") as f:
    f.write(",".join(opened) + "\n")
