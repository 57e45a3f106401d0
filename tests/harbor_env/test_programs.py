"""Programs: the sandbox shows the image's programs (its Debian packages' files), not the host's.

The bug: the sandbox took the host's whole /usr, so an agent harness asking
``command -v tmux`` got the host's answer. terminus-2 found a tmux the image
does not install, and codex failed for want of a ripgrep the image installs
but the host lacked.
"""

from __future__ import annotations

import shutil

import pytest

from harbor_agents import harbor_commands
from sandboxes import DOCKERFILE, run, running

from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.modelling import export_spec
from orharbor.harbor_env import BubblewrapEnvironment, debian
from orharbor.harbor_env.image import read_dockerfile

#: Host programs no task image installs: the sandbox itself and its user-mode network, both of which
#: scripts/setup.sh installs on every machine that runs the suite (podman, also host-only, is not always there).
HOST_ONLY = ("bwrap", "slirp4netns")
PROBE = "for p in {}; do command -v $p || echo absent:$p; done"


def _probe(env_dir, tmp_path, programs, then: str = "") -> list[str]:
    """``command -v`` of each program (then the command ``then``), as the agent's user, in a sandbox of the
    image in ``env_dir``."""
    from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
    from harbor.models.trial.paths import TrialPaths

    paths = TrialPaths(tmp_path / "trial")
    paths.mkdir()
    env = BubblewrapEnvironment(
        environment_dir=env_dir,
        environment_name="p",
        session_id="p__env",
        trial_paths=paths,
        task_env_config=EnvironmentConfig(),
        network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
    )

    async def body():
        async with running(env):
            return await env.exec(PROBE.format(" ".join(programs)) + then, user="agent")

    result = run(body())
    assert result.return_code == 0, result
    return result.stdout.split()


def _image(tmp_path, apt: str) -> object:
    """A test image: the sandboxes' Dockerfile with an ``apt-get install`` of ``apt``."""
    folder = tmp_path / "image"
    folder.mkdir()
    (folder / "Dockerfile").write_text(
        DOCKERFILE.replace(
            "RUN useradd",
            f"RUN apt-get update && apt-get install -y --no-install-recommends {apt} "
            "&& rm -rf /var/lib/apt/lists/*\nRUN useradd",
        )
    )
    return folder


@pytest.mark.sandbox
def test_an_exported_task_has_tmux_and_ripgrep_and_no_host_only_program(shipped_rows, tmp_path):
    """An exported agent image: the harnesses' tmux and rg are there, bubblewrap and slirp4netns are not."""
    for program in HOST_ONLY:
        assert shutil.which(program), f"the host lacks {program}: this test proves nothing here"
    task = export_row(next(r for r in shipped_rows if r["level"] == 1), tmp_path / "tasks")
    # terminus-2 checks `tmux -V` and `asciinema --version`; codex `command -v rg`
    found = _probe(
        task / "environment",
        tmp_path,
        ("tmux", "rg", "git", "curl", "node", *HOST_ONLY),
        then="; tmux -V >/dev/null && asciinema --version >/dev/null && echo runs",
    )
    assert found == [
        "/usr/bin/tmux",
        "/usr/bin/rg",
        "/usr/bin/git",
        "/usr/bin/curl",
        "/usr/bin/node",
        *(f"absent:{p}" for p in HOST_ONLY),
        "runs",
    ]


@pytest.mark.sandbox
@pytest.mark.parametrize("kind", ["algorithm", "modelling"])
def test_every_command_harbors_agents_check_for_is_there(shipped_rows, shipped_specs, tmp_path, kind):
    """In an exported image's sandbox, each agent setup's `command -v` check passes, so it apt-gets nothing."""
    commands = sorted(set().union(*harbor_commands().values()))
    assert {"tmux", "rg", "node", "npm", "gcc", "pgrep"} <= set(commands)  # the reader still reads Harbor
    out = tmp_path / "tasks"
    task = (
        export_row(next(r for r in shipped_rows if r["level"] == 2), out)
        if kind == "algorithm"
        else export_spec(shipped_specs[0], out, ExportOptions())
    )
    found = _probe(task / "environment", tmp_path, commands)
    assert [line for line in found if line.startswith("absent:")] == []


@pytest.mark.sandbox
def test_a_program_the_dockerfile_does_not_install_is_absent(tmp_path):
    """An image that installs ripgrep but not tmux has rg and no tmux, though the host has both."""
    assert shutil.which("tmux") and shutil.which("rg")
    found = _probe(_image(tmp_path, "ripgrep"), tmp_path, ("rg", "tmux", "bash", "awk", "python3"))
    assert found == ["/usr/bin/rg", "absent:tmux", "/usr/bin/bash", "/usr/bin/awk", "/usr/local/bin/python3"]


@pytest.mark.sandbox
def test_file_by_file_binds_show_the_same_programs(tmp_path, monkeypatch):
    """Where hard links cannot be made, each program is bound on its own: same programs, same absences."""
    monkeypatch.setattr(debian, "_staged", lambda names: None)
    found = _probe(_image(tmp_path, "ripgrep"), tmp_path, ("rg", "tmux", "bash", "awk", "bwrap"))
    assert found == ["/usr/bin/rg", "absent:tmux", "/usr/bin/bash", "/usr/bin/awk", "absent:bwrap"]


@pytest.mark.sandbox  # as root, as the environment runs: hard links to others' files need it
def test_the_staged_links_are_roots_alone():
    """The host folder of hard links (setuid programs among them) is closed to other users of the host."""
    top = debian._staged(("ripgrep",))
    assert top is not None and (top.stat().st_mode & 0o777) == 0o700
    assert (top / "usr" / "bin" / "rg").samefile("/usr/bin/rg")
    assert not (top / "usr" / "bin" / "tmux").exists()


@pytest.mark.sandbox
def test_without_the_filter_the_hosts_programs_show(tmp_path, monkeypatch):
    """Mutation: with the program folders not masked, the host's tmux and bwrap show in the same image."""
    monkeypatch.setattr(debian, "program_args", lambda names: [])
    found = _probe(_image(tmp_path, "ripgrep"), tmp_path, ("tmux", "bwrap"))
    assert found == ["/usr/bin/tmux", "/usr/bin/bwrap"]


def test_a_package_the_host_lacks_fails_the_start_naming_the_install(tmp_path):
    """The start refuses an image whose package this machine does not have, and says what to install."""
    env_dir = _image(tmp_path, "tmux orharbor-no-such-package")
    with pytest.raises(debian.MissingPackages, match="apt-get install .*orharbor-no-such-package"):
        debian.programs(read_dockerfile(env_dir / "Dockerfile").apt_packages)


def test_the_closure_takes_depends_not_recommends():
    """tmux brings its libraries (Depends); curl's Recommends are not taken (--no-install-recommends)."""
    with_tmux = debian.closure(("tmux",))
    assert {"tmux", "libevent-core-2.1-7", "libc6"} <= with_tmux
    recommends = {"ca-certificates"} & set(debian.installed()) - debian.closure(("libcurl4",))
    assert recommends, "libcurl4 recommends ca-certificates, which its closure must not take"


@pytest.mark.sandbox
def test_check_refuses_once_when_a_task_image_needs_a_package_this_machine_lacks(shipped_rows, tmp_path):
    """orharbor check on the bubblewrap environment names the apt-get install before any trial starts."""
    from orharbor.harbor_env.sandbox import SandboxUnavailable
    from orharbor.check.trials import check_tasks

    task = export_row(next(r for r in shipped_rows if r["level"] == 1), tmp_path / "tasks")
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("procps ", "procps orharbor-no-such-package "))
    with pytest.raises(SandboxUnavailable, match="apt-get install .*orharbor-no-such-package"):
        check_tasks(tmp_path / "tasks", env="orharbor.harbor_env:BubblewrapEnvironment")
