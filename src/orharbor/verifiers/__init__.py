"""Standard-library-only code that runs inside a task's verifier.

Everything under this package is copied into every exported task's ``tests/``
folder, so it may import nothing outside the standard library and
``orharbor.verifiers``.
"""
