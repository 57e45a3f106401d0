"""The retail model of the RetailOpt-190 modelling tasks and its prompt helpers."""
