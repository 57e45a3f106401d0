"""Inert stand-ins for a provider's missing SDK packages, so that its Harbor module imports and its code runs.

A provider module whose SDK is not installed is imported with stand-ins for just the
missing top-level packages (found from the module's own import statements, then from
``ModuleNotFoundError``); the stand-ins are removed again, with every module first
imported while they were installed that kept one, so nothing leaks into ``sys.modules``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from pathlib import Path
from typing import Iterator


#: Names of stubbed SDK objects that provider code touched while it was being probed.
STUB_USES: set[str] = set()


class _StubMeta(type):
    """Classes that answer every attribute with another inert class."""

    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        STUB_USES.add(f"{cls.__qualname__}.{name}")
        return _stub_class(f"{cls.__qualname__}.{name}")

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())


def _stub_class(qualname: str) -> type:
    """An inert stand-in: instances are falsy, empty, and answer every attribute or call with another."""

    def used(what: str):
        STUB_USES.add(what)

    def __init__(self, *args, **kwargs):
        used(qualname + "()")

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        used(f"{qualname}().{name}")
        return object.__new__(_stub_class(f"{qualname}().{name}"))

    def __call__(self, *args, **kwargs):
        used(f"{qualname}(...)")
        return self

    return _StubMeta(
        qualname.rsplit(".", 1)[-1],
        (),
        {
            "__init__": __init__,
            "__getattr__": __getattr__,
            "__call__": __call__,
            "__bool__": lambda self: False,
            "__len__": lambda self: 0,
            "__iter__": lambda self: iter(()),
            "__getitem__": lambda self, key: object.__new__(_stub_class(f"{qualname}[]")),
            "__qualname__": qualname,
            "__module__": "orharbor.providers.stub",
        },
    )


class StubModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


class _StubFinder(importlib.abc.MetaPathFinder):
    def __init__(self, roots: tuple[str, ...]):
        self.roots = frozenset(roots)

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        return None


def _is_stub(value: object) -> bool:
    return isinstance(value, (StubModule, _StubMeta)) or isinstance(type(value), _StubMeta)


def _forget(name: str, restore: types.ModuleType | None = None) -> None:
    """Remove a module from sys.modules and from its parent package (or put ``restore`` back in both)."""
    module = sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    package = sys.modules.get(parent) if parent else None
    if restore is not None:
        sys.modules[name] = restore
        if package is not None:
            setattr(package, child, restore)
    elif package is not None and module is not None and getattr(package, child, None) is module:
        delattr(package, child)


def _drop_stub_modules(roots: tuple[str, ...], before: set[str]) -> None:
    """Forget the stub packages and any module first imported while they were installed that uses them."""
    for name in [n for n in sys.modules if n.split(".")[0] in roots]:
        _forget(name)
    for name in [n for n in sys.modules if n not in before]:
        if any(_is_stub(value) for value in list(vars(sys.modules[name]).values())):
            _forget(name)


@contextlib.contextmanager
def stubs_installed(roots: tuple[str, ...]) -> Iterator[None]:
    if not roots:
        yield
        return
    finder = _StubFinder(roots)
    before = set(sys.modules)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        _drop_stub_modules(roots, before)


def module_files(module_name: str) -> list[Path]:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        return []
    if spec.submodule_search_locations:
        return sorted(p for location in spec.submodule_search_locations for p in Path(location).rglob("*.py"))
    return [Path(spec.origin)]


def missing_packages(files: list[Path]) -> tuple[str, ...]:
    """Top-level packages the provider's own files import that are not installed."""
    roots: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
    return tuple(
        sorted(root for root in roots if root not in sys.stdlib_module_names and importlib.util.find_spec(root) is None)
    )


def import_with_stubs(module_name: str, roots: tuple[str, ...]) -> tuple[types.ModuleType, tuple[str, ...]]:
    """A fresh copy of ``module_name`` imported with ``roots`` stubbed; sys.modules is left as it was."""
    for _ in range(20):
        own = [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]
        saved = {name: sys.modules.pop(name) for name in own}
        try:
            with stubs_installed(roots), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return importlib.import_module(module_name), roots
        except ModuleNotFoundError as exc:
            root = (exc.name or "").split(".")[0]
            if not root or root in roots or importlib.util.find_spec(root) is not None:
                raise
            roots = tuple(sorted({*roots, root}))
        finally:
            for name in sorted(
                (n for n in sys.modules if n == module_name or n.startswith(module_name + ".")), reverse=True
            ):
                _forget(name)
            for name, module in sorted(saved.items()):
                _forget(name, restore=module)
    raise ImportError(f"could not import {module_name} with stubbed SDK packages {roots}")
