"""File system: what the task image holds, and no host path beyond it.

The attack: the host's /usr and /etc used to be visible read-only in every sandbox
(with the host's pip settings, keys and machine id), so a host file whose mode an
earlier trial had widened was read by the next trial's agent.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from sandboxes import environment, run, running

from orharbor.harbor_env import rootfs


def _in_sandbox(tmp_path, *commands: str, user: str = "agent"):
    async def body():
        async with running(environment(tmp_path)) as (env,):
            return [await env.exec(c, user=user) for c in commands]

    return run(body())


@pytest.fixture
def host_secret():
    """A world-readable file in the host's /etc, as an earlier trial could have left one."""
    path = Path("/etc") / f"orharbor-secret-{uuid.uuid4().hex}"
    path.write_text("host secret\n")
    path.chmod(0o644)
    yield path
    path.unlink()


@pytest.mark.sandbox
def test_etc_holds_only_what_a_base_image_has(tmp_path, host_secret):
    """The host's own /etc entries (pip.conf, machine-id, a planted secret) are not there; a base image's are."""
    [listing, secret] = _in_sandbox(tmp_path, "ls -A /etc", f"cat {host_secret}")
    names = set(listing.stdout.split())
    allowed = {*rootfs.ETC_FROM_HOST, "localtime", "passwd", "group", "shadow", "hostname", "hosts", "resolv.conf"}
    assert names <= allowed, names - allowed
    assert {"passwd", "ssl", "nsswitch.conf"} <= names
    assert secret.return_code != 0 and "host secret" not in secret.stdout


@pytest.mark.sandbox
def test_with_the_hosts_etc_bound_the_planted_file_is_read(tmp_path, host_secret, monkeypatch):
    """Mutation: binding the host's /etc, as before, lets the agent read the host's file."""

    def host_etc(generated: dict[str, int]) -> list[str]:
        return [
            "--ro-bind",
            "/etc",
            "/etc",
            *[a for name, fd in generated.items() for a in ("--ro-bind-data", str(fd), f"/etc/{name}")],
        ]

    monkeypatch.setattr(rootfs, "etc_args", host_etc)
    [secret] = _in_sandbox(tmp_path, f"cat {host_secret}")
    assert secret.stdout == "host secret\n"


@pytest.mark.sandbox
def test_python_lives_under_usr_local_as_in_the_image_and_the_hosts_tree_is_hidden(tmp_path):
    """sys.prefix is /usr/local, no pyvenv.cfg stands beside it, and the host interpreter's folder is not there."""
    probe = "import sys, os; print(sys.prefix, sys.base_prefix, os.path.exists(sys.argv[1]))"
    [prefix, venv, pyvenv, host_local] = _in_sandbox(
        tmp_path,
        f"python3 -I -c '{probe}' {sys.base_prefix}",
        "/opt/orharbor-solver/bin/python3 -I -c 'import numpy, sys; print(sys.prefix, sys.base_prefix)'",
        "ls /usr/local/pyvenv.cfg /usr/local/bin/pyvenv.cfg",
        "ls /usr/local/bin",
    )
    assert prefix.stdout.split() == ["/usr/local", "/usr/local", "False"], prefix
    assert venv.stdout.split() == ["/opt/orharbor-solver", "/usr/local"], venv
    assert pyvenv.return_code != 0
    assert set(host_local.stdout.split()) == {"python", "python3", f"python{rootfs.VERSION}"}


@pytest.mark.sandbox
def test_root_cannot_write_the_hosts_files_or_remount_them(tmp_path):
    """Host /usr is read-only to the sandbox's root, and remounting it needs a capability root lacks."""
    [write, remount] = _in_sandbox(tmp_path, "touch /usr/bin/orharbor-planted", "mount -o remount,rw /usr", user="root")
    assert write.return_code != 0 and "Read-only" in write.stderr
    assert remount.return_code != 0
    assert not Path("/usr/bin/orharbor-planted").exists()


#: What the agent reads of the kernel's key list: the host root's keyrings are listed there unmasked.
KEYS = "cat /proc/keys | wc -c; ls -A /proc/acpi 2>/dev/null | wc -l; cat /proc/timer_list | wc -c"


@pytest.mark.sandbox
def test_proc_paths_docker_masks_read_empty(tmp_path):
    """/proc/keys, /proc/timer_list and /proc/acpi read as empty, as in a Docker container; /proc itself works."""
    [masked, proc] = _in_sandbox(tmp_path, KEYS, "cat /proc/self/status | head -1", user="root")
    assert masked.stdout.split() == ["0", "0", "0"], masked
    assert proc.stdout.startswith("Name:")


@pytest.mark.sandbox
def test_without_the_masks_the_sandbox_lists_the_kernels_keys(tmp_path, monkeypatch):
    """Mutation: a plain /proc shows the sandbox's root the kernel's key list (descriptions of host root's keys)."""
    monkeypatch.setattr(rootfs, "MASKED_PROC_FILES", ())
    monkeypatch.setattr(rootfs, "MASKED_PROC_DIRS", ())
    [masked] = _in_sandbox(tmp_path, KEYS, user="root")
    assert int(masked.stdout.split()[0]) > 0, masked
