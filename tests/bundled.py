"""Reading and editing a module of an exported task's verifier bundle (tests/orharbor.zip), for mutation tests."""

from __future__ import annotations

import zipfile
from pathlib import Path

from orharbor.task_template.verify import BUNDLE


def read_bundled(tests: Path, name: str) -> str:
    """The text of ``name`` (``orharbor/verifiers/main.py``) in the bundle of the tests folder ``tests``."""
    with zipfile.ZipFile(tests / BUNDLE) as bundle:
        return bundle.read(name).decode()


def edit_bundled(tests: Path, name: str, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in bundled module ``name``; the zip is written again.

    The caller writes tests/manifest.json again afterwards if the edit is the task's own (a mutation).
    """
    text = read_bundled(tests, name)
    assert old in text, f"defence {old!r} not found in {name}: update this test"
    rewrite_zip(tests / BUNDLE, lambda entry, data: text.replace(old, new).encode() if entry == name else data)


def rewrite_zip(path: Path, edit) -> None:
    """The zip at ``path`` written again with ``edit(name, data)`` in place of every entry's data."""
    with zipfile.ZipFile(path) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w") as archive:
        for info, data in entries:
            archive.writestr(info, edit(info.filename, data))
