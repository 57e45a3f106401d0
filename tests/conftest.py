"""Shared fixtures: the real benchmark files beside the checkout, exported shipped tasks.

Tests that read ../shared/data (through the fixtures of PUBLISHED_FIXTURES, directly or
through a fixture built on them) are marked ``published``. A clone without ../shared skips
them and says so in one line; CI (``CI`` set) stops at the start instead, since it must
run them.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from orharbor.datasets.rows import read_rows, shipped_datasets
from orharbor.exporter import ExportOptions, export_dataset

from quick_retail import QUICK_RETAIL

# A suite started in the background by a shell without job control (`cmd &` in a script, `nohup`) inherits
# SIGINT ignored, and so does every process it starts: Python then keeps ignoring it, as the convention for
# background jobs asks, so the interrupt tests would wait an hour for a Ctrl-C that can never arrive (and
# leave that process running). The tests send their own signals; they need Python's normal handler.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
NO_SHARED = "../shared/data not found beside the checkout"
#: The fixtures that read ../shared/data; pytest's fixture closure adds every fixture built on them.
PUBLISHED_FIXTURES = {"instances_dir", "retail_v0"}


def _in_ci() -> bool:
    """CI sets CI (GitHub to "true"; .github/workflows/ci.yml passes it through sudo)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def pytest_sessionstart(session):
    """CI must run the published-fixture tests, so a CI run without ../shared stops here, loudly."""
    if _in_ci() and not SHARED_DATA.is_dir():
        pytest.exit(
            f"CI needs the published fixtures: {NO_SHARED} (check out the shared repository "
            "as ../shared, as .github/workflows/ci.yml does)",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


@pytest.hookimpl(tryfirst=True)  # before -m deselects, so -m published sees the marker
def pytest_collection_modifyitems(items):
    """Mark ``published`` every test that uses a fixture reading ../shared/data."""
    for item in items:
        if PUBLISHED_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.published)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Without ../shared (outside CI: see pytest_sessionstart) a published test skips. Every such skip
    comes from this one line, so -ra (pyproject's addopts) reports them all in one line with their count."""
    if not SHARED_DATA.is_dir() and item.get_closest_marker("published"):
        pytest.skip(f"published-fixture test: {NO_SHARED}")


def _published(relative: str) -> Path:
    """SHARED_DATA / relative, which must exist once ../shared/data does."""
    path = SHARED_DATA / relative
    assert path.exists(), f"fixture missing: {path} (../shared/data is there but lacks it)"
    return path


@pytest.fixture(scope="session")
def instances_dir() -> Path:
    """The published benchmark instances of ../shared/data/instances."""
    return _published("instances")


@pytest.fixture(scope="session")
def retail_v0() -> Path:
    """../shared/data/retailopt190/v0.jsonl: variant v0 of the 38 RetailOpt-190 archetypes."""
    return _published("retailopt190/v0.jsonl")


@pytest.fixture(scope="session")
def shipped_rows() -> list[dict]:
    """Every row of the datasets shipped in the package."""
    return [row for path in shipped_datasets() for row in read_rows(path)]


@pytest.fixture(scope="session")
def exported(tmp_path_factory, shipped_rows) -> dict[str, Path]:
    """The shipped dataset exported once per verifier mode: mode -> tasks folder."""
    out = {}
    for mode in ("separate", "shared"):
        folder = tmp_path_factory.mktemp(f"tasks-{mode}")
        export_dataset(shipped_rows, folder, ExportOptions(verifier_mode=mode))
        out[mode] = folder
    return out


@pytest.fixture(scope="session")
def shipped_specs():
    """The modelling specs shipped in the package."""
    from orharbor.modelling.spec import load_specs, shipped_specs_dir

    return load_specs(shipped_specs_dir())


@pytest.fixture(scope="session")
def retail_rows(retail_v0) -> list[dict]:
    """The 38 RetailOpt-190 v0 scenarios of ../shared/data, imported as rows."""
    from orharbor.modelling.retailopt import import_file

    return import_file(retail_v0)


@pytest.fixture(scope="session")
def exported_specs(tmp_path_factory, shipped_specs) -> dict[str, Path]:
    """Every shipped spec exported (with hints) once per verifier mode: mode -> tasks folder."""
    from orharbor.exporter.modelling import export_spec

    out = {}
    for mode in ("separate", "shared"):
        folder = tmp_path_factory.mktemp(f"specs-{mode}")
        for spec in shipped_specs:
            export_spec(spec, folder, ExportOptions(verifier_mode=mode), hints="all")
        out[mode] = folder
    return out


@pytest.fixture(scope="session")
def exported_retail(tmp_path_factory, retail_rows) -> dict[str, Path]:
    """The quick RetailOpt rows exported with both prompts, once per verifier mode."""
    from orharbor.exporter.modelling import export_retail

    out = {}
    for mode in ("separate", "shared"):
        folder = tmp_path_factory.mktemp(f"retail-{mode}")
        options = ExportOptions(verifier_mode=mode)
        for row in retail_rows:
            if row["scenario_id"] in QUICK_RETAIL:
                export_retail(row, folder, options, prompt="full")
                export_retail(dict(row, id=row["id"] + "-schema"), folder, options, prompt="schema")
        out[mode] = folder
    return out
