"""Golden solution: pallet transportation from five plants to twelve warehouses (LP, GLOP).

Reads plants.csv, warehouses.csv and routes.csv; writes min_cost.txt. Route flows are not
graded (transportation LPs often have several optimal flows), only the optimal cost.
"""

import csv

from ortools.linear_solver import pywraplp


def read(name):
    with open(name, newline="") as f:
        return list(csv.DictReader(f))


plants = {r["plant"]: float(r["capacity_pallets"]) for r in read("plants.csv")}
warehouses = {r["warehouse"]: float(r["demand_pallets"]) for r in read("warehouses.csv")}
routes = read("routes.csv")

solver = pywraplp.Solver.CreateSolver("GLOP")
flow = [solver.NumVar(0, float(r["max_pallets"]), f"f_{r['plant']}_{r['warehouse']}") for r in routes]
for p, capacity in plants.items():
    solver.Add(sum(f for f, r in zip(flow, routes) if r["plant"] == p) <= capacity)
for w, demand in warehouses.items():
    solver.Add(sum(f for f, r in zip(flow, routes) if r["warehouse"] == w) == demand)
solver.Minimize(sum(float(r["cost_per_pallet"]) * f for f, r in zip(flow, routes)))
status = solver.Solve()
assert status == pywraplp.Solver.OPTIMAL, status

cost = solver.Objective().Value()
print(f"variables={solver.NumVariables()} cost={cost:.6f}")
with open("min_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
