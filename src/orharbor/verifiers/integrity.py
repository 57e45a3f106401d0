"""What the verifier can check about its own interpreter (shared verifier mode).

In shared mode the verifier runs in the agent's container. Separate mode makes
tampering impossible; here we detect what we can: a customisation module that
Python loaded, an interpreter run without isolation (``-I``) or with site
(``-S`` missing: ``.pth`` files ran), a venv's prefix (a ``pyvenv.cfg`` was read),
or code the verifier imported that is not owned by root or is writable by others.
This runs after Python has started; test.sh compares the interpreter and its
standard library with the image build's record before it starts, and verify.py
checks /tests against its manifest before anything is imported from there. An
agent with root in its container can defeat any such check, which is why separate
mode is the default (see docs/security.md).
"""

from __future__ import annotations

import os
import stat
import sys


def tampering() -> list[str]:
    """Reasons to distrust this interpreter; empty when nothing looks tampered."""
    reasons = []
    if not sys.flags.isolated:
        reasons.append("the verifier was not started with python3 -I")
    if not sys.flags.no_site:
        reasons.append("the verifier was not started with python3 -S (site and .pth files ran)")
    if sys.prefix != sys.base_prefix or sys.exec_prefix != sys.base_exec_prefix:
        reasons.append(f"Python runs as a venv ({sys.prefix}): a pyvenv.cfg was read")
    for name in ("sitecustomize", "usercustomize"):
        if name in sys.modules:
            reasons.append(f"Python loaded a {name} module from {getattr(sys.modules[name], '__file__', '?')}")
    paths = {os.path.realpath(sys.executable), os.path.dirname(os.__file__)}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            paths.add(path)
    for path in sorted(paths):
        problem = _unsafe(path)
        if problem:
            reasons.append(problem)
    return reasons


def _unsafe(path: str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if info.st_uid != 0:
        return f"{path} is owned by uid {info.st_uid}, not root"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by other users"
    return None
