"""Quick RetailOpt scenarios (the retail model solves each in well under a second) for exported-task tests.

A module of its own, not conftest.py: tests/problems has a conftest too, and
``from conftest import`` would find whichever was imported last.
"""

QUICK_RETAIL = ("retail_f1_base_v0", "retail_f7_multiechelon_chain_v0")
