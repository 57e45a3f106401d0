"""Deleting hostile trees: deep chains, closed folders, symlinks, FIFOs, never following a link, never raising."""

from __future__ import annotations

import os
import shutil

import pytest

from orharbor.verifiers import removal
from orharbor.verifiers.removal import empty_dir, remove_path


def _chain(top: str, depth: int) -> None:
    """A folder chain ``depth`` levels deep (made through descriptors: its paths exceed PATH_MAX)."""
    os.makedirs(top)
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)


def test_a_chain_deeper_than_the_recursion_limit_is_removed(tmp_path):
    top = str(tmp_path / "deep")
    _chain(top, 3000)
    with pytest.raises(RecursionError):  # what the verifier used before, and why it is not used now
        shutil.rmtree(top, ignore_errors=True)
    assert remove_path(top) and not os.path.lexists(top)


def test_open_descriptors_stay_bounded(tmp_path, monkeypatch):
    """Deeper than MAX_OPEN, folders are moved up rather than opened: a low descriptor limit is enough."""
    monkeypatch.setattr(removal, "MAX_OPEN", 4)
    top = str(tmp_path / "deep")
    _chain(top, 200)
    # count the descriptors remove_path itself holds open at once: descriptor *numbers* would also move
    # with whatever another thread of this process (a server a previous test left running) opens meanwhile
    live: set[int] = set()
    opened, most = [0], [0]
    real_open, real_close = os.open, os.close

    def counting_open(*args, **kwargs):
        fd = real_open(*args, **kwargs)
        live.add(fd)
        opened[0] += 1
        most[0] = max(most[0], len(live))
        return fd

    def counting_close(fd):
        live.discard(fd)
        return real_close(fd)

    monkeypatch.setattr(removal.os, "open", counting_open)
    monkeypatch.setattr(removal.os, "close", counting_close)
    assert remove_path(top) and opened[0] > 200
    assert most[0] <= removal.MAX_OPEN + 2 and not live  # descriptors are reused, never piled up, all closed


def test_links_are_removed_not_followed_and_odd_entries_go_too(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "link-dir").symlink_to(outside)
    (tree / "a" / "link-file").symlink_to(outside / "keep.txt")
    os.mkfifo(tree / "a" / "fifo")
    (tree / "a" / "b" / "x").write_text("x")
    os.chmod(tree / "a" / "b", 0)
    os.chmod(tree / "a", 0)
    assert remove_path(str(tree)) and not tree.exists()
    assert (outside / "keep.txt").read_text() == "mine"


def test_a_symlink_to_a_folder_is_removed_as_a_link(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (target / "f").write_text("x")
    (tmp_path / "link").symlink_to(target)
    assert remove_path(str(tmp_path / "link")) and (target / "f").exists()


def test_missing_paths_and_kept_entries(tmp_path):
    assert remove_path(str(tmp_path / "nothing"))
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    assert empty_dir(str(tmp_path), keep=lambda entry: entry.name == "b") == 2
    assert sorted(os.listdir(tmp_path)) == ["b"]
