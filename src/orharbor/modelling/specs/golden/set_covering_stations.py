"""Golden solution: ambulance station siting as a (multi-)covering problem (MIP, CBC).

Reads sites.csv, zones.csv and travel_minutes.csv; writes total_cost.txt and stations.txt.

Model: open[s] binary; zone z is covered by s when travel_minutes[z][s] <= 12;
  sum_{s covering z} open[s] >= stations_required[z];  minimise sum annual_cost[s] * open[s].

Uniqueness: re-solving with a no-good cut excluding the optimal station set costs 33000 more
than the optimum, so the optimal set is unique (tests/test_spec_library.py repeats this with
scipy.optimize.milp).
"""

import csv

from ortools.linear_solver import pywraplp

MAX_MINUTES = 12


def read(name):
    with open(name, newline="") as f:
        return list(csv.DictReader(f))


sites = read("sites.csv")
zones = read("zones.csv")
travel = {row["zone"]: row for row in read("travel_minutes.csv")}

solver = pywraplp.Solver.CreateSolver("CBC")
is_open = {r["site"]: solver.BoolVar(f"open_{r['site']}") for r in sites}
for z in zones:
    covering = [s for s in is_open if int(travel[z["zone"]][s]) <= MAX_MINUTES]
    solver.Add(sum(is_open[s] for s in covering) >= int(z["stations_required"]))
solver.Minimize(sum(float(r["annual_cost"]) * is_open[r["site"]] for r in sites))
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status

cost = solver.Objective().Value()
chosen = sorted(s for s, v in is_open.items() if v.solution_value() > 0.5)
print(f"variables={solver.NumVariables()} cost={cost:.2f} stations={chosen}")
with open("total_cost.txt", "w") as f:
    f.write(f"{round(cost)}\n")
with open("stations.txt", "w") as f:
    f.write(",".join(chosen) + "\n")
