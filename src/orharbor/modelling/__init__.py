"""Modelling tasks: an optimisation problem in words and data, graded against a known value.

Two sources feed them: YAML problem specs with golden scripts (:mod:`.spec`,
shipped ones under ``specs/``) and RetailOpt-190 scenarios (:mod:`.retailopt`,
solved by the retail model in ``retail/``).
"""
