"""What the verifier can check about its own interpreter (shared verifier mode).

In shared mode the verifier runs in the agent's container. Separate mode makes
tampering impossible; here we detect what we can: a customisation module that
Python loaded, an interpreter run without isolation, or code the verifier
imported that is not owned by root or is writable by others. An agent with root
in its container can defeat any such check, which is why separate mode is the
default (see SECURITY.md).
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
