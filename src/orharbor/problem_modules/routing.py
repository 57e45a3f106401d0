"""OR-Tools routing boilerplate shared by the vehicle-routing references."""

from __future__ import annotations


def routes_from(routing, manager, assignment, vehicles: int) -> list[list[int]]:
    """The non-empty routes of an OR-Tools routing assignment, as node indices without the depot."""
    routes = []
    for v in range(vehicles):
        index = assignment.Value(routing.NextVar(routing.Start(v)))
        route = []
        while not routing.IsEnd(index):
            route.append(manager.IndexToNode(index))
            index = assignment.Value(routing.NextVar(index))
        if route:
            routes.append(route)
    return routes
