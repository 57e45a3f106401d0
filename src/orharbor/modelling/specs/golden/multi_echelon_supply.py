"""Golden solution: two-echelon supply chain, factories -> depots -> zones, with depot opening
decisions (MIP, SCIP).

Reads factories.csv, depots.csv, zones.csv, factory_depot_costs.csv and depot_zone_costs.csv;
writes total_cost.txt and open_depots.txt.

Model: open[d] binary; u[f,d] >= 0 units factory f -> depot d; v[d,z] >= 0 units depot d -> zone z.
  sum_d u[f,d] <= capacity[f]                       factory capacity
  sum_f u[f,d] == sum_z v[d,z]                      depot flow balance (no stock kept)
  sum_z v[d,z] <= capacity[d] * open[d]             depot throughput, only if open
  sum_d v[d,z] == demand[z]
  minimise  sum fixed[d] open[d] + sum (production_cost[f] + cost[f,d]) u[f,d]
          + sum (handling_cost[d] + cost[d,z]) v[d,z]

Uniqueness of the set of open depots: re-solving with a no-good cut that excludes the optimal set
gives a strictly larger cost (tests/test_spec_library.py, independent scipy.optimize.milp model).
"""

import csv

from ortools.linear_solver import pywraplp


def read(name):
    with open(name, newline="") as f:
        return list(csv.DictReader(f))


factories = {r["factory"]: r for r in read("factories.csv")}
depots = {r["depot"]: r for r in read("depots.csv")}
zones = {r["zone"]: float(r["demand"]) for r in read("zones.csv")}
fd_cost = {(r["factory"], r["depot"]): float(r["cost_per_unit"]) for r in read("factory_depot_costs.csv")}
dz_cost = {(d, r["zone"]): float(r[d]) for r in read("depot_zone_costs.csv") for d in depots}

solver = pywraplp.Solver.CreateSolver("SCIP")
solver.SetNumThreads(1)
inf = solver.infinity()
is_open = {d: solver.BoolVar(f"open_{d}") for d in depots}
u = {(f, d): solver.NumVar(0, inf, f"u_{f}_{d}") for f in factories for d in depots}
v = {(d, z): solver.NumVar(0, inf, f"v_{d}_{z}") for d in depots for z in zones}
for f, row in factories.items():
    solver.Add(sum(u[f, d] for d in depots) <= float(row["capacity"]))
for d, row in depots.items():
    outflow = sum(v[d, z] for z in zones)
    solver.Add(sum(u[f, d] for f in factories) == outflow)
    solver.Add(outflow <= float(row["capacity"]) * is_open[d])
for z, demand in zones.items():
    solver.Add(sum(v[d, z] for d in depots) == demand)
    for d in depots:  # tightening: a closed depot serves nothing
        solver.Add(v[d, z] <= demand * is_open[d])
solver.Minimize(
    sum(float(depots[d]["fixed_cost"]) * is_open[d] for d in depots)
    + sum((float(factories[f]["production_cost"]) + fd_cost[f, d]) * u[f, d] for f in factories for d in depots)
    + sum((float(depots[d]["handling_cost"]) + dz_cost[d, z]) * v[d, z] for d in depots for z in zones)
)
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status

cost = solver.Objective().Value()
opened = sorted(d for d in depots if is_open[d].solution_value() > 0.5)
print(f"variables={solver.NumVariables()} cost={cost:.6f} open={opened}")
with open("total_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
with open("open_depots.txt", "w") as f:
    f.write(",".join(opened) + "\n")
