"""A base image is checked before anything builds on it: one line naming what it lacks.

No container engine runs here: the check runs on fake image layouts (its ``$R``
roots the interpreter paths), and ``orharbor images`` drives a fake engine that
runs the check on such a layout. scripts/e2e-podman.sh builds on a real one.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor.image_facts.base_image import CHECK, dockerfile_step
from orharbor.cli import main
from orharbor.modelling.spec import shipped_specs_dir

TOOLS = ("bash", "find", "stat", "sha256sum", "sort", "comm", "awk", "sed", "xargs", "readlink", "apt-get", "useradd")


def layout(root: Path, link: str = "python3.12", ensurepip: bool = True, without: tuple[str, ...] = ()) -> Path:
    """A fake image: /usr/local/bin as the python slim images lay it out (``link``: what python3 points to; the
    interpreter a script that imports venv and ensurepip, or fails to), and a bin folder of this machine's tools
    but ``without``."""
    local = root / "usr" / "local" / "bin"
    local.mkdir(parents=True)
    (local / "python3.12").write_text(
        "#!/bin/sh\n"
        + ("exit 0\n" if ensurepip else "echo \"ModuleNotFoundError: No module named 'ensurepip'\" >&2; exit 1\n")
    )
    (local / "python3.12").chmod(0o755)
    (local / "python3").symlink_to(link)
    tools = root / "tools"
    tools.mkdir()
    for tool in TOOLS:
        if tool not in without:
            (tools / tool).symlink_to(shutil.which(tool) or f"/usr/sbin/{tool}")
    return root


def check(root: Path) -> subprocess.CompletedProcess:
    """CHECK as an image's /bin/sh runs it (dash here, as in Debian images), on the fake layout."""
    return subprocess.run(
        ["/bin/sh", "-c", CHECK], env={"R": str(root), "PATH": str(root / "tools")}, capture_output=True, text=True
    )


def test_the_python_slim_layout_passes_silently(tmp_path):
    done = check(layout(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("absolute link", "/usr/local/bin/python3 as a link to python3.X beside it (it is /usr/bin/python3)"),
        ("dangling link", "/usr/local/bin/python3.11"),
        ("no ensurepip", "venv and ensurepip for python3.12"),
        ("no sha256sum", "sha256sum"),
        ("no apt-get", "apt-get"),
    ],
)
def test_an_image_laid_out_otherwise_gets_one_line_naming_what_it_lacks(tmp_path, kind, expected):
    link = {"absolute link": "/usr/bin/python3", "dangling link": "python3.11"}.get(kind, "python3.12")
    root = layout(
        tmp_path,
        link=link,
        ensurepip=kind != "no ensurepip",
        without=(kind.removeprefix("no "),) if kind in ("no sha256sum", "no apt-get") else (),
    )
    done = check(root)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line == f"orharbor: this base image cannot carry an orharbor task, it lacks: {expected}"


def test_several_gaps_are_named_together(tmp_path):
    root = layout(tmp_path, link="python3", without=("useradd", "xargs"))
    (line,) = check(root).stderr.splitlines()
    assert line.endswith(
        "lacks: /usr/local/bin/python3 as a link to python3.X beside it (it is python3); xargs; useradd"
    )


def test_every_dockerfile_runs_the_check_first(tmp_path):
    """Agent and verifier Dockerfiles of algorithm and modelling tasks: the step right after FROM is the check."""
    runner = CliRunner()
    for args in (["--problem", "wtardiness", "--verifier-mode", "separate"], ["--specs", str(shipped_specs_dir())]):
        out = tmp_path / args[0].strip("-")
        done = runner.invoke(main, ["export", "--out", str(out), *args])
        assert done.exit_code == 0, done.output
        dockerfiles = sorted(out.glob("*/environment/Dockerfile")) + sorted(out.glob("*/tests/Dockerfile"))
        assert any("/tests/" in str(d) for d in dockerfiles) and any("/environment/" in str(d) for d in dockerfiles)
        for dockerfile in dockerfiles:
            text = dockerfile.read_text()
            after_from = text[text.index("\nFROM ") :].split("\n", 2)[2]
            assert after_from.startswith(dockerfile_step() + "\n"), dockerfile


FAKE_ENGINE = """#!/bin/sh
# A container engine that logs its commands and runs `run ... IMAGE -c SCRIPT` on a fake layout.
echo "$*" >> "$ENGINE_LOG"
if [ "$1" = run ]; then for last; do :; done; R="$FAKE_ROOT" PATH="$FAKE_ROOT/tools" exec /bin/sh -c "$last"; fi
exit 0
"""


@pytest.fixture
def image_export(tmp_path):
    out = tmp_path / "export"
    done = CliRunner().invoke(
        main,
        ["export", "--out", str(out), "--problem", "wtardiness", "--image-prefix", "registry.example.com/or/tasks"],
    )
    assert done.exit_code == 0, done.output
    engine = tmp_path / "engine"
    engine.write_text(FAKE_ENGINE)
    engine.chmod(engine.stat().st_mode | stat.S_IEXEC)
    return out, engine


@pytest.mark.parametrize("good", [True, False])
def test_images_checks_the_base_image_before_it_builds_anything(image_export, tmp_path, good, monkeypatch):
    out, engine = image_export
    root = layout(tmp_path / "image", link="python3.12" if good else "/usr/bin/python3")
    log = tmp_path / "engine.log"
    monkeypatch.setitem(os.environ, "ENGINE_LOG", str(log))
    monkeypatch.setitem(os.environ, "FAKE_ROOT", str(root))
    done = CliRunner().invoke(main, ["images", str(out), "--engine", str(engine)])
    commands = log.read_text().splitlines()
    assert commands[0].startswith("run --rm --network none --entrypoint /bin/sh python:3.12-slim-bookworm@sha256:")
    builds = [c for c in commands if c.startswith("build ")]
    if good:
        assert done.exit_code == 0, done.output
        assert len(builds) == 2 * len(list(out.glob("*/task.toml")))
    else:
        assert done.exit_code == 1 and builds == []
        error = [line for line in done.output.splitlines() if line.startswith("Error:")]
        assert len(error) == 1 and error[0].endswith(
            "this base image cannot carry an orharbor task, it lacks: /usr/local/bin/python3 as a link to "
            "python3.X beside it (it is /usr/bin/python3); nothing was built"
        )
