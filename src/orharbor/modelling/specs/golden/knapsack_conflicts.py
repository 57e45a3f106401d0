"""Golden solution: two-dimensional 0-1 knapsack with conflict pairs (CP-SAT).

Reads cargo.json; writes total_value.txt and selected_items.txt.

Uniqueness: the optimum is attained by one item set only; the second-best feasible set is worth
11 points less. Checked by brute-force enumeration of all 2^20 subsets in
tests/test_spec_library.py; re-solving this model with a no-good cut that excludes the optimal
set gives the same 11-point drop.
"""

import json

from ortools.sat.python import cp_model

data = json.load(open("cargo.json"))
items = data["items"]
ids = [it["id"] for it in items]

model = cp_model.CpModel()
take = {it["id"]: model.NewBoolVar(it["id"]) for it in items}
model.Add(sum(it["weight_kg"] * take[it["id"]] for it in items) <= data["max_weight_kg"])
model.Add(sum(it["volume_l"] * take[it["id"]] for it in items) <= data["max_volume_l"])
for a, b in data["conflicts"]:
    model.AddBoolOr([take[a].Not(), take[b].Not()])
model.Maximize(sum(it["value"] * take[it["id"]] for it in items))

solver = cp_model.CpSolver()
solver.parameters.num_workers = 1
solver.parameters.random_seed = 0
status = solver.Solve(model)
assert status == cp_model.OPTIMAL, solver.StatusName(status)

value = int(round(solver.ObjectiveValue()))
chosen = sorted(i for i in ids if solver.Value(take[i]))
print(f"variables={len(ids)} value={value} items={chosen}")
with open("total_value.txt", "w") as f:
    f.write(f"{value}\n")
with open("selected_items.txt", "w") as f:
    f.write(",".join(chosen) + "\n")
