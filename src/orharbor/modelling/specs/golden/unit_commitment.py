"""Golden solution: 24-hour unit commitment with minimum up/down times and a spinning reserve
(MIP, HiGHS through pywraplp).

Reads grid.json; writes total_cost.txt. Only the optimal cost is graded.

Model, for unit g and hour t = 1..24 (hour 0 = the given initial state):
  on[g,t], start[g,t] binary, power[g,t] >= 0;  stop[g,t] := start[g,t] - on[g,t] + on[g,t-1] >= 0
  min_mw[g] on[g,t] <= power[g,t] <= max_mw[g] on[g,t]
  start[g,t] >= on[g,t] - on[g,t-1]
  sum_g power[g,t] == demand[t];  sum_g max_mw[g] on[g,t] >= (1 + reserve) demand[t]
  minimum up:   sum_{tau = t-UT+1..t} start[g,tau] <= on[g,t]
  minimum down: sum_{tau = t-DT+1..t} stop[g,tau] <= 1 - on[g,t]
  minimise sum no_load on + energy_cost power + startup_cost start.
"""

import json

from ortools.linear_solver import pywraplp

data = json.load(open("grid.json"))
H = data["hours"]
demand = data["demand_mw"]
reserve = data["reserve_fraction"]
units = data["units"]
hours = range(1, H + 1)

solver = pywraplp.Solver.CreateSolver("HIGHS")
solver.SetNumThreads(1)
on, start, power, stop = {}, {}, {}, {}
for g, u in enumerate(units):
    on[g, 0] = 1 if u["on_at_start"] else 0
    for t in hours:
        on[g, t] = solver.BoolVar(f"on_{g}_{t}")
        start[g, t] = solver.BoolVar(f"start_{g}_{t}")
        power[g, t] = solver.NumVar(0, u["max_mw"], f"p_{g}_{t}")
        stop[g, t] = start[g, t] - on[g, t] + on[g, t - 1]
        solver.Add(stop[g, t] >= 0)
        solver.Add(start[g, t] >= on[g, t] - on[g, t - 1])
        solver.Add(power[g, t] >= u["min_mw"] * on[g, t])
        solver.Add(power[g, t] <= u["max_mw"] * on[g, t])
    for t in hours:
        solver.Add(sum(start[g, tau] for tau in range(max(1, t - u["min_up_hours"] + 1), t + 1)) <= on[g, t])
        solver.Add(sum(stop[g, tau] for tau in range(max(1, t - u["min_down_hours"] + 1), t + 1)) <= 1 - on[g, t])
for t in hours:
    solver.Add(sum(power[g, t] for g in range(len(units))) == demand[t - 1])
    solver.Add(sum(u["max_mw"] * on[g, t] for g, u in enumerate(units)) >= (1 + reserve) * demand[t - 1])
solver.Minimize(
    sum(
        u["no_load_cost_per_hour"] * on[g, t] + u["energy_cost_per_mwh"] * power[g, t] + u["startup_cost"] * start[g, t]
        for g, u in enumerate(units)
        for t in hours
    )
)
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status

cost = solver.Objective().Value()
print(f"variables={solver.NumVariables()} cost={cost:.6f}")
for g, u in enumerate(units):
    print(u["unit"], "".join(str(round(on[g, t].solution_value())) for t in hours))
with open("total_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
