"""Delete a file or a whole tree, however hostile: iterative, no symlink followed, bounded file descriptors.

``shutil.rmtree`` recurses once per level (a 3,000-level folder chain raises
``RecursionError``, which ``ignore_errors`` does not catch) and builds full
paths (past ``PATH_MAX`` it fails). Here every step works relative to an open
directory descriptor, the walk is a loop over an explicit stack, at most
``MAX_OPEN`` descriptors are open at once (deeper folders are moved up to the
top of the tree and deleted from there), and an entry that cannot be removed
is skipped rather than retried, so the walk always ends. Nothing here raises
for what it finds inside the tree.
"""

from __future__ import annotations

import itertools
import os
import stat
from typing import Callable

#: Directory descriptors open at once while deleting; deeper folders are moved up first.
MAX_OPEN = 32
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def remove_path(path: str) -> bool:
    """Remove ``path`` (file, symlink, FIFO or folder tree); True if nothing is left there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(path)
            return True
        parent, name = os.path.split(os.path.abspath(path))
        parent_fd = os.open(parent, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        _remove_dir_at(parent_fd, name)
    finally:
        os.close(parent_fd)
    return not os.path.lexists(path)


def empty_dir(path: str, keep: Callable[[os.DirEntry[str]], bool] = lambda entry: False) -> int:
    """Remove every entry of the folder ``path`` for which ``keep(entry)`` is false; return how many."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        try:
            if keep(entry):
                continue
        except OSError:
            continue
        removed += remove_path(entry.path)
    return removed


def _remove_dir_at(parent_fd: int, name: str) -> None:
    """Delete the folder ``name`` of ``parent_fd`` and all it holds."""
    top = _open_dir(parent_fd, name)
    if top is None:
        return
    moved = itertools.count()
    # Each frame: (fd, name in its parent, names that could not be removed).
    stack: list[tuple[int, str, set[str]]] = [(top, name, set())]
    try:
        while stack:
            fd, _, stuck = stack[-1]
            child: tuple[int, str, set[str]] | None = None
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        if entry.name in stuck:
                            continue
                        try:
                            is_dir = entry.is_dir(follow_symlinks=False)
                        except OSError:
                            is_dir = False
                        if not is_dir:
                            try:
                                os.unlink(entry.name, dir_fd=fd)
                            except FileNotFoundError:
                                pass
                            except OSError:
                                stuck.add(entry.name)
                            continue
                        if len(stack) >= MAX_OPEN:  # too deep: move it up, delete it from the top later
                            try:
                                os.rename(
                                    entry.name,
                                    f".orh-up-{next(moved)}-{os.getpid()}",
                                    src_dir_fd=fd,
                                    dst_dir_fd=stack[0][0],
                                )
                            except OSError:
                                stuck.add(entry.name)
                            continue
                        child_fd = _open_dir(fd, entry.name)
                        if child_fd is None:
                            stuck.add(entry.name)
                            continue
                        child = (child_fd, entry.name, set())
                        break
            except OSError:
                child = None
            if child is not None:
                stack.append(child)
                continue
            fd, done_name, _ = stack.pop()
            os.close(fd)
            parent = stack[-1][0] if stack else parent_fd
            try:
                os.rmdir(done_name, dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError:
                if stack:
                    stack[-1][2].add(done_name)
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _open_dir(parent_fd: int, name: str) -> int | None:
    """A descriptor of the folder ``name`` (never through a symlink); made searchable if it was not."""
    for attempt in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except PermissionError:
            if attempt:
                return None
            try:  # a folder made 0000 by its owner: as its owner or root we may open it up again
                os.chmod(name, 0o700, dir_fd=parent_fd, follow_symlinks=False)
            except (OSError, NotImplementedError):
                try:
                    st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
                    if not stat.S_ISDIR(st.st_mode):
                        return None
                    os.chmod(name, 0o700, dir_fd=parent_fd)
                except OSError:
                    return None
        except OSError:
            return None
    return None
