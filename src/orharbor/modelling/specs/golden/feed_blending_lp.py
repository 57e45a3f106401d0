"""Golden solution: least-cost layer-feed blend (LP, Pyomo + HiGHS).

This is the one spec whose golden script uses Pyomo (pyomo.environ) with HiGHS through the
appsi_highs interface (highspy), to show that both modelling stacks work in the task image.
Reads ingredients.csv and requirements.csv; writes min_cost.txt, soybean_meal_kg.txt and
limestone_kg.txt.

Uniqueness: minimising and maximising each ingredient amount over the optimal face (cost fixed at
its optimum) gives the same value for every ingredient, so the whole blend is unique;
tests/test_spec_library.py repeats this check with scipy.
"""

import csv

import pyomo.environ as pyo

BATCH_KG = 2000.0
GRAIN_SHARE_MAX = 0.40  # wheat + barley at most 40 % of the batch

with open("ingredients.csv", newline="") as f:
    ingredients = {row["ingredient"]: row for row in csv.DictReader(f)}
with open("requirements.csv", newline="") as f:
    requirements = list(csv.DictReader(f))

names = list(ingredients)
m = pyo.ConcreteModel()
m.I = pyo.Set(initialize=names, ordered=True)
m.kg = pyo.Var(m.I, domain=pyo.NonNegativeReals, bounds=lambda _m, i: (0.0, float(ingredients[i]["stock_kg"])))
m.batch = pyo.Constraint(expr=sum(m.kg[i] for i in m.I) == BATCH_KG)
m.grain = pyo.Constraint(expr=m.kg["wheat"] + m.kg["barley"] <= GRAIN_SHARE_MAX * BATCH_KG)
m.nutrients = pyo.ConstraintList()
for req in requirements:
    column = req["nutrient"] + "_pct"
    content = sum(float(ingredients[i][column]) / 100.0 * m.kg[i] for i in m.I)
    if req["min_pct"].strip():
        m.nutrients.add(content >= float(req["min_pct"]) / 100.0 * BATCH_KG)
    if req["max_pct"].strip():
        m.nutrients.add(content <= float(req["max_pct"]) / 100.0 * BATCH_KG)
m.cost = pyo.Objective(expr=sum(float(ingredients[i]["cost_per_kg"]) * m.kg[i] for i in m.I), sense=pyo.minimize)

solver = pyo.SolverFactory("appsi_highs")
result = solver.solve(m, options={"threads": 1, "random_seed": 0})
assert result.solver.termination_condition == pyo.TerminationCondition.optimal, result.solver.termination_condition

cost = pyo.value(m.cost)
print(f"variables={len(names)} cost={cost:.6f}")
with open("min_cost.txt", "w") as f:
    f.write(f"{cost:.6f}\n")
for name in ("soybean_meal", "limestone"):
    with open(f"{name}_kg.txt", "w") as f:
        f.write(f"{pyo.value(m.kg[name]):.6f}\n")
