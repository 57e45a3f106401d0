"""Golden solution: three-product furniture workshop (LP, GLOP).

The data is stated in the task description (no data files). Writes max_profit.txt,
tables.txt, chairs.txt and bookcases.txt.

Uniqueness: the optimal plan is the single vertex where carpentry, finishing and the
chairs-per-table rule are binding. Checked by minimising and maximising each quantity over the
optimal face (objective fixed at its optimum): each min equals the max, so the quantities are
determined; tests/test_spec_library.py repeats this check with scipy.
"""

from ortools.linear_solver import pywraplp

products = ["tables", "chairs", "bookcases"]
profit = {"tables": 45, "chairs": 20, "bookcases": 38}
usage = {  # resource -> per-unit use of each product, capacity
    "carpentry_hours": ({"tables": 4, "chairs": 2, "bookcases": 3}, 480),
    "finishing_hours": ({"tables": 2, "chairs": 1, "bookcases": 4}, 400),
    "timber_board_feet": ({"tables": 20, "chairs": 8, "bookcases": 15}, 2400),
}

solver = pywraplp.Solver.CreateSolver("GLOP")
q = {p: solver.NumVar(0, solver.infinity(), p) for p in products}
for _name, (per_unit, capacity) in usage.items():
    solver.Add(sum(per_unit[p] * q[p] for p in products) <= capacity)
solver.Add(q["chairs"] <= 150)  # chair market limit
solver.Add(q["chairs"] >= 2 * q["tables"])  # every table is sold with at least two chairs
solver.Maximize(sum(profit[p] * q[p] for p in products))
status = solver.Solve()
assert status == pywraplp.Solver.OPTIMAL, status

value = solver.Objective().Value()
print(f"variables={solver.NumVariables()} profit={value:.6f}")
with open("max_profit.txt", "w") as f:
    f.write(f"{value:.6f}\n")
for p in products:
    with open(f"{p}.txt", "w") as f:
        f.write(f"{q[p].solution_value():.6f}\n")
