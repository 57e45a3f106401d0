"""File transfer in and out of the sandbox (``docker cp``), done by the host through descriptors.

Docker's default: ``docker cp`` makes what it copies into a container owned by
root with its modes kept, and what it copies out owned by the user who runs
it; it follows symlinks only inside the container's root, and bounds neither
size, depth nor count.

Here no program of the sandbox runs for a transfer: the host reads and writes
itself, through a descriptor of the sandbox's root (``/proc/<pid>/root`` of
its PID 1, checked against its pidfd so a recycled pid is never used). Every
path is walked one name at a time with ``O_NOFOLLOW``, ``..`` refused, on both
sides, and a folder is held by its descriptor while it is filled: a process
that swaps a folder for a symlink mid-transfer makes an open fail, or changes
nothing. No symlink is ever followed, in the sandbox or on the host.

- Upload (host -> sandbox): files and folders owned by root with their
  permission bits (setuid, setgid and sticky dropped), symlinks copied as
  symlinks, sockets, FIFOs and devices skipped. A missing parent of the target
  is made root's, 0755; a folder that exists in the tree becomes root's with
  the source's mode (as ``docker cp`` applies a folder's metadata). A symlink
  or a non-folder where a folder is needed fails the upload.
- Download (sandbox -> host): regular files with their holes kept, owned by
  the host user, mode & 0o755; folders 0755; a symlink only when relative and
  inside the copied tree; FIFOs, sockets and devices are never opened. A file
  is copied once per inode: a download of a folder remembers each file with
  more than one name by its sandbox ``(st_dev, st_ino)``, and where its copy
  went on the host, as names from the download's top folder; a later name of
  that inode becomes a host hard link to the copy (its folder reopened name
  by name from the top, ``O_NOFOLLOW``, and the new link checked to be that
  copy's inode), costing no data. When the copy was skipped or failed, or the
  link cannot be made, the later name is skipped, never copied, and one
  warning names such names (the first three, and how many): one file's
  blocks are never paid for twice, so hard links cannot amplify what reaches
  the host.

The numbers it enforces, on every transfer: :data:`MAX_DEPTH` (64 folder
levels), :data:`MAX_ENTRIES` (100,000 entries), :data:`MAX_BYTES` (1 GiB of
data), :data:`MAX_FILE_SIZE` (256 MiB apparent size per file), and at most
:data:`MAX_OPEN_LEVELS` (32) folders open on each side. Past a limit the rest
is skipped with a warning naming it, never an error: a hostile tree must not
cost a trial its reward.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import select
import stat
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: Folder levels copied below the top of a tree; deeper folders are skipped.
MAX_DEPTH = 64
#: Entries (of any kind) looked at in one transfer; the rest are skipped.
MAX_ENTRIES = 100_000
#: Bytes of data written by one transfer (holes are free); the rest is skipped.
MAX_BYTES = 1 << 30
#: Apparent size of one file; a larger file is skipped.
MAX_FILE_SIZE = 256 << 20
#: Folder levels held open on each side; deeper ones are reopened by name when needed again.
MAX_OPEN_LEVELS = 32
#: Permission bits an upload keeps (no setuid, setgid, sticky) and a download keeps (no write for others).
UPLOAD_MODE = 0o777
DOWNLOAD_MODE = 0o755
CHUNK = 1 << 20

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_root(pid: int, pidfd: int) -> int:
    """An ``O_PATH`` descriptor of the sandbox's root, opened while ``pidfd`` (of ``pid``) says PID 1 lives."""
    fd = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    if select.select([pidfd], [], [], 0)[0]:  # exited: the pid may already name another process
        os.close(fd)
        raise RuntimeError("the sandbox's PID 1 exited before its root could be opened")
    return fd


# ---------------------------------------------------------------------- the four transfers


async def upload_file(root: int, logger: logging.Logger, source: Path, target: str) -> None:
    """Copy the host file (or symlink) ``source`` to the sandbox path ``target``, root-owned."""
    await _in_thread(_upload_file, root, logger, source, target)


async def upload_dir(root: int, logger: logging.Logger, source: Path, target: str) -> None:
    """Copy what the host folder ``source`` holds into the sandbox folder ``target`` (made if missing)."""
    await _in_thread(_upload_dir, root, logger, source, target)


async def download_file(root: int, logger: logging.Logger, source: str, target: Path) -> None:
    """Copy the sandbox's regular file ``source`` to the host path ``target``; anything else is refused."""
    await _in_thread(_download_file, root, logger, source, target)


async def download_dir(root: int, logger: logging.Logger, source: str, target: Path) -> None:
    """Copy what the sandbox folder ``source`` holds into the host folder ``target``, within the limits."""
    await _in_thread(_download_dir, root, logger, source, target)


async def _in_thread(function, root: int, *args) -> None:
    """Run a blocking transfer off the event loop, on a copy of the root descriptor that the thread closes.

    If the trial is cancelled and the environment stopped while the thread
    still runs, a closed and reused descriptor number must never point the
    transfer somewhere else; a thread that never started leaves its copy to
    be closed here.
    """
    own = [os.dup(root)]
    lock = threading.Lock()

    def work() -> None:
        with lock:
            fd = own.pop() if own else None
        if fd is None:
            return
        try:
            function(fd, *args)
        finally:
            os.close(fd)

    try:
        await asyncio.to_thread(work)
    finally:
        with lock:
            if own:
                os.close(own.pop())


def _upload_file(root: int, logger: logging.Logger, source: Path, target: str) -> None:
    names = sandbox_names(target)
    if not names:
        raise RuntimeError(f"cannot upload {source} to {target!r}: that is the sandbox's root folder")
    st = os.lstat(source)
    if stat.S_ISDIR(st.st_mode):
        raise RuntimeError(f"cannot upload {source} with upload_file: it is a folder")
    copy = _Copy(upload=True, what=f"upload of {source} to {target}", logger=logger)
    host = os.open(source.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        parent = _open_sandbox_dir(root, names[:-1], target, make=True)
        try:
            copy.entry(host, source.name, parent, names[-1], depth=0, where=target)
        finally:
            os.close(parent)
    finally:
        os.close(host)
    copy.report()


def _upload_dir(root: int, logger: logging.Logger, source: Path, target: str) -> None:
    names = sandbox_names(target)
    copy = _Copy(upload=True, what=f"upload of {source} to {target}", logger=logger)
    host = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        mode = os.fstat(host).st_mode & UPLOAD_MODE
        parent = _open_sandbox_dir(root, names[:-1], target, make=True)
        try:
            # a target that exists keeps its owner and mode (docker cp's "src/." rule); a new one gets the source's
            top = _sandbox_child_dir(parent, names[-1], target, new_mode=mode) if names else os.dup(parent)
        finally:
            os.close(parent)
        try:
            copy.tree(host, top, where=target)
        finally:
            os.close(top)
    finally:
        os.close(host)
    copy.report()


def _download_file(root: int, logger: logging.Logger, source: str, target: Path) -> None:
    names = sandbox_names(source)
    if not names:
        raise RuntimeError(f"cannot download {source!r} as a file: it is the sandbox's root folder")
    copy = _Copy(upload=False, what=f"download of {source}", logger=logger)
    parent = _open_sandbox_dir(root, names[:-1], source, make=False)
    try:
        try:
            st = os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            raise RuntimeError(f"{source}: no such file in the sandbox") from None
        if not stat.S_ISREG(st.st_mode):
            raise RuntimeError(f"{source} in the sandbox is {_kind(st.st_mode)}, not a regular file: not downloaded")
        target.parent.mkdir(parents=True, exist_ok=True)
        host = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            copy.entry(parent, names[-1], host, target.name, depth=0, where=source, single=True)
        finally:
            os.close(host)
    finally:
        os.close(parent)
    copy.report()


def _download_dir(root: int, logger: logging.Logger, source: str, target: Path) -> None:
    names = sandbox_names(source)
    copy = _Copy(upload=False, what=f"download of {source}", logger=logger)
    top = _open_sandbox_dir(root, names, source, make=False)
    try:
        target.mkdir(parents=True, exist_ok=True)
        host = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            copy.tree(top, host, where=source)
        finally:
            os.close(host)
    finally:
        os.close(top)
    copy.report()


# ---------------------------------------------------------------------- paths in the sandbox


def sandbox_names(path: str) -> list[str]:
    """The names of the sandbox path ``path`` from its root (relative paths start there too); ``..`` is refused."""
    names = [name for name in path.split("/") if name not in ("", ".")]
    if ".." in names:
        raise RuntimeError(f"{path!r}: '..' is refused in a sandbox path")
    return names


def _open_sandbox_dir(root: int, names: list[str], path: str, *, make: bool) -> int:
    """The sandbox folder at ``names``, walked from ``root`` one name at a time; missing ones made if ``make``."""
    fd = os.open(".", _DIR, dir_fd=root)
    try:
        for index, name in enumerate(names):
            where = "/" + "/".join(names[: index + 1])
            child = _sandbox_child_dir(fd, name, where, new_mode=0o755 if make else None)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _sandbox_child_dir(parent: int, name: str, where: str, *, new_mode: int | None) -> int:
    """The folder ``name`` of ``parent`` in the sandbox, never through a symlink; made root's if missing and
    ``new_mode`` is given."""
    for _ in range(3):  # made, then moved away before it was opened: made again
        made = False
        if new_mode is not None:
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
                made = True
            except FileExistsError:
                pass
            except OSError as exc:
                raise RuntimeError(f"cannot make {where} in the sandbox: {exc.strerror}") from None
        try:
            fd = os.open(name, _DIR, dir_fd=parent)
        except FileNotFoundError:
            if new_mode is None:
                raise RuntimeError(f"{where}: no such folder in the sandbox") from None
            continue
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                raise RuntimeError(
                    f"{where} in the sandbox is a symlink or not a folder: a transfer never follows one"
                ) from None
            raise RuntimeError(f"cannot open {where} in the sandbox: {exc.strerror}") from None
        if made:
            assert new_mode is not None  # made only when new_mode is given
            try:
                os.fchown(fd, 0, 0)
                os.fchmod(fd, new_mode)
            except BaseException:
                os.close(fd)
                raise
        return fd
    raise RuntimeError(f"{where} in the sandbox kept vanishing while it was made")


def inside(link: str, depth: int) -> bool:
    """Whether the symlink text ``link``, in a folder ``depth`` levels below the top, stays inside the tree.

    Only ``..`` leading the text may climb (at most ``depth`` of them); a ``..``
    after a name could climb out of wherever that name's own symlink points.
    """
    if not link or link.startswith("/"):
        return False
    parts = [part for part in link.split("/") if part not in ("", ".")]
    climbs = 0
    while climbs < len(parts) and parts[climbs] == "..":
        climbs += 1
    return climbs <= depth and ".." not in parts[climbs:]


# ---------------------------------------------------------------------- copying


class _Skipped(Exception):
    """An entry left out on purpose: ``reason`` names why, ``limit`` whether a limit did it."""

    def __init__(self, reason: str, limit: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.limit = limit


@dataclass
class _Level:
    """A folder being copied: its name in its parent, the names left, its descriptors (-1 while closed), and its
    names from the top of the tree."""

    name: str
    pending: list[str]
    source: int = -1
    target: int = -1
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Copied:
    """Where a download copied a sandbox file that has more names: its host folder's names from the top target
    folder, its name there, and the host inode it got, ``(st_dev, st_ino)``."""

    folder: tuple[str, ...]
    name: str
    inode: tuple[int, int]


class _Copy:
    """One transfer: its direction, the budget it has left, and what it skipped."""

    def __init__(self, *, upload: bool, what: str, logger: logging.Logger) -> None:
        self.upload = upload
        self.what = what
        self.logger = logger
        self.entries = 0
        self.bytes = 0
        self.full = False  # the data limit was reached: the rest is skipped
        self.skipped: Counter[str] = Counter()
        self.limits: Counter[str] = Counter()
        self.top = -1  # the top target folder of a tree, where the host paths of copies start
        # a download's files with more names, by sandbox (st_dev, st_ino): their copy, None while it is not complete
        self.copies: dict[tuple[int, int], _Copied | None] = {}
        self.unlinked: list[str] = []  # later names of those files that could not be linked to their copy

    def report(self) -> None:
        """One warning per limit reached, one for hard links left out, one debug line for the rest left out."""
        for reason, count in self.limits.items():
            if reason in ("entries", "bytes"):
                self.logger.warning(f"{self.what}: stopped at {_limit(reason)}; the rest is skipped")
            else:
                what = "folder" if reason == "depth" else "file"
                self.logger.warning(
                    f"{self.what}: {count} {what}{'' if count == 1 else 's'} past {_limit(reason)} skipped"
                )
        if self.unlinked:
            count, shown = len(self.unlinked), ", ".join(self.unlinked[:3])
            more = f" and {count - 3} more" if count > 3 else ""
            self.logger.warning(
                f"{self.what}: {count} hard link{'' if count == 1 else 's'} skipped, as their file "
                f"was not downloaded or could not be linked to: {shown}{more}"
            )
        if self.skipped:
            self.logger.debug(
                f"{self.what}: left out "
                + ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped.items()))
            )

    # -- the tree, iteratively

    def tree(self, source: int, target: int, *, where: str) -> None:
        """Copy what the folder ``source`` holds into the folder ``target`` (both left open for the caller)."""
        self.top = target
        stack = [_Level("", self._listing(source), source, target)]
        try:
            while stack:
                level = stack[-1]
                if self.full or not level.pending:
                    if len(stack) > 1:
                        _close(level)
                    stack.pop()
                    continue
                name = level.pending.pop()
                if not self._reopen(stack, where):
                    continue
                path = "/".join([where.rstrip("/"), *(lv.name for lv in stack[1:]), name])
                child = self._guarded(path, self._folder_or_entry, level, name, len(stack), path)
                if child is not None:
                    stack.append(child)
                    self._trim(stack)
        finally:
            for level in stack[1:]:
                _close(level)

    def _folder_or_entry(self, level: _Level, name: str, depth: int, path: str) -> _Level | None:
        st = os.stat(name, dir_fd=level.source, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            self.entry(level.source, name, level.target, name, depth=depth - 1, where=path, st=st, folder=level.path)
            return None
        if depth > MAX_DEPTH:
            raise _Skipped("depth", limit=True)
        if self.entries >= MAX_ENTRIES:  # nothing more could be listed in it
            raise _Skipped("entries", limit=True)
        source = os.open(name, _DIR, dir_fd=level.source)
        try:
            target = self._target_dir(level.target, name, os.fstat(source).st_mode, path)
        except BaseException:
            os.close(source)
            raise
        return _Level(name, self._listing(source), source, target, (*level.path, name))

    def _guarded(self, path: str, step, *args):
        """``step(*args)``: a skip is counted; an error fails an upload and skips the entry of a download."""
        try:
            return step(*args)
        except _Skipped as skip:
            (self.limits if skip.limit else self.skipped)[skip.reason] += 1
        except OSError as exc:
            if self.upload:
                raise RuntimeError(f"{self.what} failed at {path}: {exc.strerror or exc}") from None
            self.skipped["entries that vanished or could not be read"] += 1
        return None

    def _listing(self, fd: int) -> list[str]:
        """The names in the folder ``fd``, in the order they will be copied, within the entry limit."""
        names: list[str] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                if self.entries >= MAX_ENTRIES:  # the names listed so far are still copied
                    self.limits["entries"] += 1
                    break
                self.entries += 1
                names.append(entry.name)
        names.sort(reverse=True)  # popped from the end: copied in name order
        return names

    def _reopen(self, stack: list[_Level], where: str) -> bool:
        """Make sure the deepest level is open, reopening closed levels by name from the deepest open one."""
        if stack[-1].source >= 0:
            return True
        first = max(i for i, level in enumerate(stack) if level.source >= 0) + 1
        for index in range(first, len(stack)):
            parent, level = stack[index - 1], stack[index]
            try:
                level.source = os.open(level.name, _DIR, dir_fd=parent.source)
                level.target = os.open(level.name, _DIR, dir_fd=parent.target)
            except OSError as exc:  # renamed or swapped since: its subtree is left out
                if level.source >= 0:
                    os.close(level.source)
                    level.source = -1
                if self.upload:
                    raise RuntimeError(
                        f"{self.what} failed: a folder under {where} changed during the upload ({exc.strerror})"
                    ) from None
                for rest in stack[index:]:
                    self.skipped["folders that changed during the copy"] += 1
                    rest.pending.clear()
                return False
            self._trim(stack)
        return True

    @staticmethod
    def _trim(stack: list[_Level]) -> None:
        """Close the shallowest open levels (the top excepted) beyond :data:`MAX_OPEN_LEVELS`."""
        open_levels = [level for level in stack[1:] if level.source >= 0]
        for level in open_levels[: max(0, len(open_levels) - MAX_OPEN_LEVELS)]:
            _close(level)

    # -- one entry

    def entry(
        self,
        source_dir: int,
        source_name: str,
        target_dir: int,
        target_name: str,
        *,
        depth: int,
        where: str,
        st: os.stat_result | None = None,
        single: bool = False,
        folder: tuple[str, ...] | None = None,
    ) -> None:
        """Copy one file or symlink; with ``single`` (download_file) a skip is an error.

        ``folder``, the names of ``target_dir`` from the top target folder, makes a download copy a file with
        more names once: its other names become host hard links to that copy.
        """

        def step() -> None:
            info = st or os.stat(source_name, dir_fd=source_dir, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode):
                self._file(source_dir, source_name, target_dir, target_name, where, folder)
            elif stat.S_ISLNK(info.st_mode):
                self._symlink(source_dir, source_name, target_dir, target_name, depth)
            else:
                raise _Skipped(_kind(info.st_mode, plural=True))

        if not single:
            self._guarded(where, step)
            return
        try:
            step()
        except _Skipped as skip:
            message = f"{where} was not downloaded: " + (
                f"past {_limit(skip.reason)}" if skip.limit else f"it is not a regular file ({skip.reason})"
            )
            self.logger.warning(f"{self.what}: {message}")
            raise RuntimeError(message) from None

    def _file(
        self,
        source_dir: int,
        source_name: str,
        target_dir: int,
        target_name: str,
        where: str,
        folder: tuple[str, ...] | None,
    ) -> None:
        source = os.open(source_name, _READ, dir_fd=source_dir)
        try:
            st = os.fstat(source)
            if not stat.S_ISREG(st.st_mode):  # swapped since it was listed
                raise _Skipped(_kind(st.st_mode, plural=True))
            inode = (st.st_dev, st.st_ino)
            tracked = folder is not None and not self.upload
            if tracked and self._repeat(st):  # its blocks were met once: never copied again
                self._link(self.copies[inode], target_dir, target_name, where)
                return
            remembered = tracked and st.st_nlink > 1
            if remembered:
                self.copies[inode] = None  # until its copy is complete: later names are skipped if it is not
            if st.st_size > MAX_FILE_SIZE:
                raise _Skipped("file size", limit=True)
            target = self._make(
                target_dir, target_name, lambda: os.open(target_name, _CREATE, 0o600, dir_fd=target_dir)
            )
            try:
                complete = self._data(source, target, st.st_size)
                if self.upload:
                    os.fchown(target, 0, 0)
                os.fchmod(target, st.st_mode & (UPLOAD_MODE if self.upload else DOWNLOAD_MODE))
                os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
                copied = os.fstat(target)
            finally:
                os.close(target)
            if not complete:
                os.unlink(target_name, dir_fd=target_dir)
                raise _Skipped("bytes", limit=True)
            if remembered:
                assert folder is not None  # remembered only when tracked, which needs a folder
                self.copies[inode] = _Copied(folder, target_name, (copied.st_dev, copied.st_ino))
        finally:
            os.close(source)

    def _repeat(self, st: os.stat_result) -> bool:
        """Whether the sandbox file ``st`` is a later name of an inode this download met already."""
        return (st.st_dev, st.st_ino) in self.copies

    def _link(self, copied: _Copied | None, target_dir: int, target_name: str, where: str) -> None:
        """Make ``target_name`` a host hard link to ``copied``; without a copy, or if the link fails, it is skipped
        and named in the report."""
        if copied is not None:
            try:
                folder = os.open(".", _DIR, dir_fd=self.top)
                try:
                    for name in copied.folder:  # the trusted host side, still walked without following symlinks
                        child = os.open(name, _DIR, dir_fd=folder)
                        os.close(folder)
                        folder = child
                    self._make(
                        target_dir,
                        target_name,
                        lambda: os.link(
                            copied.name, target_name, src_dir_fd=folder, dst_dir_fd=target_dir, follow_symlinks=False
                        ),
                    )
                finally:
                    os.close(folder)
                linked = os.stat(target_name, dir_fd=target_dir, follow_symlinks=False)
                if (linked.st_dev, linked.st_ino) == copied.inode:
                    return
                os.unlink(target_name, dir_fd=target_dir)  # not the copy (it was replaced on the host)
            except OSError:
                pass
        self.unlinked.append(where)

    def _data(self, source: int, target: int, size: int) -> bool:
        """Copy ``size`` bytes, holes left as holes; False when the data limit stopped it."""
        offset = 0
        while offset < size:
            start, end = _next_data(source, offset, size)
            if start >= end:
                break
            while start < end:
                count = min(CHUNK, end - start)
                if self.bytes + count > MAX_BYTES:
                    self.full = True
                    return False
                chunk = os.pread(source, count, start)
                if not chunk:  # it shrank while being copied
                    end = size
                    break
                view = memoryview(chunk)
                while view:
                    written = os.pwrite(target, view, start)
                    view, start = view[written:], start + written
                self.bytes += len(chunk)
            offset = end
        os.ftruncate(target, size)
        return True

    def _symlink(self, source_dir: int, source_name: str, target_dir: int, target_name: str, depth: int) -> None:
        link = os.readlink(source_name, dir_fd=source_dir)
        if not self.upload and not inside(link, depth):
            raise _Skipped("symlinks leaving the tree")
        self._make(target_dir, target_name, lambda: os.symlink(link, target_name, dir_fd=target_dir))
        if self.upload:
            os.chown(target_name, 0, 0, dir_fd=target_dir, follow_symlinks=False)

    @staticmethod
    def _make(folder: int, name: str, create):
        """``create()`` a new entry ``name``; an existing one that is not a folder is unlinked first."""
        for _ in range(3):
            try:
                return create()
            except FileExistsError:
                try:
                    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    raise IsADirectoryError(errno.EISDIR, "a folder is in the way") from None
                try:
                    os.unlink(name, dir_fd=folder)
                except FileNotFoundError:
                    pass
        raise FileExistsError(errno.EEXIST, "something kept coming back in the way")

    def _target_dir(self, parent: int, name: str, mode: int, path: str) -> int:
        """The target folder ``name`` of ``parent``: made if missing; in the sandbox root's, else 0755."""
        if self.upload:
            fd = _sandbox_child_dir(parent, name, path, new_mode=mode & UPLOAD_MODE)
            try:  # a folder that was there becomes root's too, as docker cp applies a folder's metadata
                os.fchown(fd, 0, 0)
                os.fchmod(fd, mode & UPLOAD_MODE)
            except BaseException:
                os.close(fd)
                raise
            return fd
        for _ in range(3):
            try:
                os.mkdir(name, DOWNLOAD_MODE, dir_fd=parent)
            except FileExistsError:
                pass
            try:
                fd = os.open(name, _DIR, dir_fd=parent)
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                os.unlink(name, dir_fd=parent)  # a file or symlink of an earlier copy: replaced by the folder
                continue
            os.fchmod(fd, DOWNLOAD_MODE)
            return fd
        raise FileExistsError(errno.EEXIST, "something kept coming back in the way")


def _next_data(fd: int, offset: int, size: int) -> tuple[int, int]:
    """The next stretch of data at or after ``offset``, as (start, end) capped at ``size``."""
    try:
        start = os.lseek(fd, offset, os.SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # only a hole is left
            return size, size
        if exc.errno == errno.EINVAL:  # no hole reporting: all of it is data
            return offset, size
        raise
    try:
        end = os.lseek(fd, start, os.SEEK_HOLE)
    except OSError:
        end = size
    return min(start, size), min(end, size)


def _limit(reason: str) -> str:
    """The limit named ``reason``, with its number, in words."""
    return {
        "depth": f"the depth limit ({MAX_DEPTH} folder levels)",
        "entries": f"the entry limit ({MAX_ENTRIES:,} entries)",
        "bytes": f"the data limit ({MAX_BYTES >> 20} MiB)",
        "file size": f"the file size limit ({MAX_FILE_SIZE >> 20} MiB per file)",
    }[reason]


def _close(level: _Level) -> None:
    for fd in (level.source, level.target):
        if fd >= 0:
            os.close(fd)
    level.source = level.target = -1


def _kind(mode: int, plural: bool = False) -> str:
    """What an entry that is not a regular file is, in words ("a FIFO", or "FIFOs")."""
    for test, name in (
        (stat.S_ISDIR, "folder"),
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            break
    else:
        name = "special file"
    return f"{name}s" if plural else f"a {name}"
