"""The standard-library verifier bundle copied into every task's ``tests/``.

The bundle mirrors the package layout (``orharbor/verifiers/...`` and
``orharbor/problem_modules/<name>/verify.py``) so the verifier code imports
the same names inside a task as it does in the package, but every
``__init__.py`` in it is empty: nothing outside the standard library loads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orharbor
from orharbor import problem_modules

PACKAGE_DIR = Path(orharbor.__file__).resolve().parent
_EMPTY_INIT = '"""orharbor verifier bundle (standard library only)."""\n'


def write_bundle(problem: str | None, tests_dir: Path) -> list[Path]:
    """Copy the verifier package and ``problem``'s verify.py (if any: modelling tasks have none) under ``tests_dir``."""
    root = tests_dir / "orharbor"
    packages = [root, root / "verifiers"]
    if problem is not None:
        problem_modules.get(problem)  # validates the name and the class folder
        packages += [root / "problem_modules", root / "problem_modules" / problem]
    written = []
    for package in packages:
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(_EMPTY_INIT)
        written.append(package / "__init__.py")
    for source in sorted((PACKAGE_DIR / "verifiers").glob("*.py")):
        if source.name != "__init__.py":
            shutil.copyfile(source, root / "verifiers" / source.name)
            written.append(root / "verifiers" / source.name)
    if problem is not None:
        target = root / "problem_modules" / problem / "verify.py"
        shutil.copyfile(problem_modules.part(problem, "verify").__file__, target)
        written.append(target)
    return written
