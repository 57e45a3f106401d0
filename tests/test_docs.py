"""The documentation site builds with --strict, and every shell example in it says what it needs or is run.

A shell example (a ``bash``, ``sh`` or ``console`` block of docs/ or the README) carries an HTML comment on the
line before it: ``<!-- example: runs -->`` (the test below runs it, on the shipped data, page by page in one
scratch folder), or ``<!-- example: needs model|engine|network|data -->`` or ``<!-- example: long -->``, which
say why it is not run here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
BIN = Path(sys.executable).parent
KINDS = {"runs", "needs model", "needs engine", "needs network", "needs data", "long"}
FENCE = re.compile(
    r"^(?P<marker><!-- example: (?P<kind>[a-z ]+) -->\n)?```(?P<lang>bash|sh|console)\n(?P<body>.*?)^```", re.M | re.S
)
PAGES = sorted(DOCS.glob("*.md")) + [REPO / "README.md"]


def mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BIN / "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        cwd=config.parent,
        timeout=900,
    )


@pytest.mark.slow
def test_the_site_builds_strictly_and_a_broken_link_fails_it(tmp_path):
    """`mkdocs build --strict` passes on the repository's docs; with one link to a missing page it fails, naming it."""
    done = mkdocs(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "cli" / "index.html").read_text().count("orharbor export") > 0
    assert "def build_dataset" not in (tmp_path / "site" / "api" / "index.html").read_text()  # rendered, not source
    assert "build_dataset" in (tmp_path / "site" / "api" / "index.html").read_text()
    copy = tmp_path / "copy"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    (copy / "src").symlink_to(REPO / "src")
    page = copy / "docs" / "workflow.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    broken = mkdocs(copy / "mkdocs.yml", tmp_path / "site2")
    assert broken.returncode != 0 and "no-such-page.md" in broken.stderr


def examples(page: Path) -> list[tuple[str, str]]:
    """(kind or None, body) of every shell example of a page."""
    return [(m["kind"], m["body"]) for m in FENCE.finditer(page.read_text())]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_shell_example_says_what_it_needs(page):
    for kind, body in examples(page):
        assert kind in KINDS, f"{page.name}: an example without a known <!-- example: ... --> marker:\n{body[:300]}"


def test_the_marker_check_finds_an_unmarked_example():
    """The pattern sees a block without a marker (so the test above can fail)."""
    page = "Text.\n\n```bash\norharbor problems\n```\n\n<!-- example: runs -->\n```bash\norharbor problems\n```\n"
    assert [m["kind"] for m in FENCE.finditer(page)] == [None, "runs"]


RUNNABLE = [page for page in PAGES if any(kind == "runs" for kind, _ in examples(page))]


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("page", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_the_examples_that_run_on_shipped_data_do(page, tmp_path):
    """A page's runnable examples, in order, in one scratch folder, with the venv's commands first on PATH."""
    script = "set -euo pipefail\n" + "\n".join(body for kind, body in examples(page) if kind == "runs")
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "HARBOR_TELEMETRY": "0",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, f"{page.name}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
