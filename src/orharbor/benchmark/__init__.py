"""Named benchmark releases (orharbor-bench): recipes, the release folder, and its export by name.

A recipe (``recipes/*.toml``) declares the tiers, rows, seeds, limits, budgets
and network policy of a release; :mod:`.release` builds it with the
build-dataset engine, resumably, and exports it as ``NAME@VERSION``.
"""
