"""Golden solution: capacitated multi-item lot sizing with setup costs and setup times (MIP, SCIP).

Reads plan.json from the current directory and writes total_cost.txt.

Model: for product p and week t, x[p,t] >= 0 units produced, s[p,t] >= 0 units in stock at the
end of the week, y[p,t] in {0,1} "the line is set up for p in week t".
  s[p,t] = s[p,t-1] + x[p,t] - demand[p,t]            (s[p,0] = initial inventory)
  sum_p unit_hours[p] * x[p,t] + setup_hours[p] * y[p,t] <= capacity_hours[t]
  x[p,t] <= M[p,t] * y[p,t]   with M[p,t] = min(capacity/unit_hours, remaining demand of p)
  minimise sum setup_cost[p] * y[p,t] + holding_cost[p] * s[p,t]
Only the optimal cost is graded: the production plan itself is not claimed to be unique.
"""

import json

from ortools.linear_solver import pywraplp

data = json.load(open("plan.json"))
T = data["weeks"]
cap = data["capacity_hours"]
prods = data["products"]

solver = pywraplp.Solver.CreateSolver("SCIP")
solver.SetNumThreads(1)
x, s, y = {}, {}, {}
for p, prod in enumerate(prods):
    d = prod["demand"]
    for t in range(T):
        big_m = min(cap[t] / prod["unit_hours"], sum(d[t:]))
        x[p, t] = solver.NumVar(0, big_m, f"x_{p}_{t}")
        s[p, t] = solver.NumVar(0, solver.infinity(), f"s_{p}_{t}")
        y[p, t] = solver.BoolVar(f"y_{p}_{t}")
        solver.Add(x[p, t] <= big_m * y[p, t])
        before = s[p, t - 1] if t > 0 else prod["initial_inventory"]
        solver.Add(s[p, t] == before + x[p, t] - d[t])
for t in range(T):
    solver.Add(sum(pr["unit_hours"] * x[p, t] + pr["setup_hours"] * y[p, t] for p, pr in enumerate(prods)) <= cap[t])
solver.Minimize(
    sum(pr["setup_cost"] * y[p, t] + pr["holding_cost"] * s[p, t] for p, pr in enumerate(prods) for t in range(T))
)
params = pywraplp.MPSolverParameters()
params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)
status = solver.Solve(params)
assert status == pywraplp.Solver.OPTIMAL, status
cost = solver.Objective().Value()
print(f"variables={solver.NumVariables()} cost={cost:.4f}")
with open("total_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
