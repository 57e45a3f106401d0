"""Strict reading of a routing solution: ``{"routes": [[customer, ...], ...]}``.

Shared by the vehicle-routing verifiers. Customers are numbered ``1..n``; the
depot (0) is implicit at both ends of every route and may not appear inside
one; every customer is visited exactly once; empty routes are ignored.
"""

from __future__ import annotations

from orharbor.verifiers.strict import Infeasible, require_dict, require_int, require_list


def read_routes(solution: object, n_customers: int) -> list[list[int]]:
    """The non-empty routes of ``solution``, checked to visit every customer exactly once."""
    solution = require_dict(solution, "solution", ("routes",))
    routes = require_list(solution["routes"], "solution.routes")
    seen: list[str | None] = [None] * (n_customers + 1)
    kept = []
    for r, route in enumerate(routes):
        require_list(route, f"solution.routes[{r}]")
        if len(route) > n_customers:
            raise Infeasible(f"solution.routes[{r}]: {len(route)} stops for {n_customers} customers")
        for k, customer in enumerate(route):
            where = f"solution.routes[{r}][{k}]"
            require_int(customer, where)
            if customer == 0:
                raise Infeasible(f"{where}: the depot (0) may not appear inside a route")
            if not 1 <= customer <= n_customers:
                raise Infeasible(f"{where}: {customer} is not a customer (customers are 1..{n_customers})")
            if seen[customer] is not None:
                raise Infeasible(f"{where}: customer {customer} is already visited at {seen[customer]}")
            seen[customer] = where
        if route:
            kept.append(route)
    missing = [c for c in range(1, n_customers + 1) if seen[c] is None]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise Infeasible(f"customer {missing[0]}{more} never visited")
    return kept
