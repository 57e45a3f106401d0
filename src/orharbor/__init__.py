"""orharbor: hard operations-research problems as Harbor agent-benchmark tasks.

Kept import-light on purpose: the verifier part of the package is copied into
task containers that have only the Python standard library.
"""

__version__ = "0.1.0"
