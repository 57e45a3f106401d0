"""The lockdown: inside a container (a bubblewrap sandbox here), what it closes, what it leaves, and the undo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orharbor.harbor_env import sandbox
from orharbor.harbor_env import rootfs

SRC = Path(__file__).resolve().parents[1] / "src"

#: Runs as root inside the sandbox: lays out an agent's leftovers, locks, records what a run would see, restores.
SCRIPT = r"""
import json, os, stat, sys
sys.path.insert(0, sys.argv[1])
from orharbor.verifiers import lockdown
AGENT = 1000
def mode(p): return stat.S_IMODE(os.lstat(p).st_mode)
os.makedirs("/home/agent/pkgs/ortools"); os.makedirs("/app"); os.makedirs("/logs/agent"); os.makedirs("/srv/shared")
for d in ("/home/agent", "/home/agent/pkgs", "/home/agent/pkgs/ortools", "/app"):
    os.chown(d, AGENT, AGENT); os.chmod(d, 0o755)
open("/home/agent/pkgs/ortools/__init__.py", "w").close()
os.chmod("/logs", 0o755); os.chmod("/logs/agent", 0o777); os.chmod("/srv/shared", 0o775)
os.makedirs("/tmp/agent-share"); os.chown("/tmp/agent-share", AGENT, AGENT); os.chmod("/tmp/agent-share", 0o1777)
open("/app/open-file", "w").close(); os.chown("/app/open-file", AGENT, AGENT); os.chmod("/app/open-file", 0o666)
open("/srv/root-open-file", "w").close(); os.chmod("/srv/root-open-file", 0o666)
open("/srv/root-file", "w").close(); os.chmod("/srv/root-file", 0o644)
os.chown("/mnt/agentfs", AGENT, AGENT); os.chmod("/mnt/agentfs", 0o755)
open("/mnt/agentfs/f", "w").close(); os.chown("/mnt/agentfs/f", AGENT, AGENT); os.chmod("/mnt/agentfs/f", 0o666)
open("/srv/agent-file", "w").close(); os.chown("/srv/agent-file", AGENT, AGENT); os.chmod("/srv/agent-file", 0o644)
paths = ["/tmp", "/tmp/agent-share", "/home/agent", "/app", "/app/open-file", "/logs", "/logs/agent", "/srv/shared",
         "/srv/root-open-file", "/srv/root-file", "/srv/agent-file", "/mnt/agentfs", "/mnt/agentfs/f", "/dev/shm", "/dev/null"]
before = {p: mode(p) for p in paths}
state = lockdown.lock()
during = {p: mode(p) for p in paths}
uids = state.run_uids(3)
lockdown.restore(state)
after = {p: mode(p) for p in paths}
print(json.dumps({"before": before, "during": during, "after": after, "uids": uids,
                  "owners": sorted(state.owners), "entries": state.entries}))
"""


def _in_sandbox(script: str) -> dict:
    bwrap = sandbox.require_bwrap()
    base = sys.base_prefix
    args = [
        bwrap,
        *rootfs.base_args(),
        "--ro-bind",
        "/etc",
        "/etc",
        *rootfs.parents_args(base),
        "--ro-bind",
        base,
        base,
        "--ro-bind",
        str(SRC),
        "/opt/orharbor-src",  # not at its own path: a clone under /tmp would shape /tmp
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "1777",
        "--dir",
        "/tmp",
        "--tmpfs",
        "/mnt/agentfs",
        "--dir",
        "/home",
        "--dir",
        "/srv",
        "--dir",
        "/logs",
        "--unshare-pid",
        "--unshare-ipc",
        "--as-pid-1",
        "--die-with-parent",
        "--clearenv",
        f"{base}/bin/python3",
        "-I",
        "-c",
        script,
        "/opt/orharbor-src",
    ]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def modes() -> dict:
    return _in_sandbox(SCRIPT)


@pytest.mark.sandbox
def test_the_agents_files_are_hidden_and_shared_folders_closed(modes):
    during = modes["during"]
    for path in ("/home/agent", "/app", "/srv/agent-file", "/mnt/agentfs"):  # the last: a mount the agent owns
        assert during[path] & 0o077 == 0, path  # the agent's: owner only
    for path in ("/tmp", "/logs/agent"):
        assert during[path] & 0o077 == 0, path  # root's shared folders: closed to others entirely
    for path in (
        "/app/open-file",
        "/tmp/agent-share",
        "/mnt/agentfs/f",
    ):  # unreachable behind a closed folder: left as it is
        assert during[path] == modes["before"][path], path
    assert during["/srv/root-open-file"] & 0o077 == 0  # others may have written it: hidden
    assert during["/srv/shared"] == 0o755  # group-writable root folder: write taken away, still readable
    assert during["/srv/root-file"] == 0o644 and during["/logs"] == 0o755
    assert during["/dev/shm"] == 0o1777  # kept open for multiprocessing, emptied after each run
    assert during["/dev/null"] == modes["before"]["/dev/null"]


@pytest.mark.sandbox
def test_every_mode_is_restored(modes):
    assert modes["after"] == modes["before"]


@pytest.mark.sandbox
def test_runs_get_uids_that_own_nothing(modes):
    uids = modes["uids"]
    assert len(set(uids)) == 3 and 1000 in modes["owners"] and not set(uids) & set(modes["owners"])
    assert all(61184 <= uid < 65519 for uid in uids) and modes["entries"] > 0


def test_the_lockdown_refuses_without_root(monkeypatch):
    from orharbor.verifiers import lockdown

    monkeypatch.setattr(lockdown.os, "geteuid", lambda: 1000)
    with pytest.raises(lockdown.LockdownError, match="needs root"):
        lockdown.lock()
