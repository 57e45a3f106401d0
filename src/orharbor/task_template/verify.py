"""Task verifier entry: checks the tests folder against its manifest, then runs orharbor's verifier beside it.

test.sh runs it as ``python3 -I -S -B`` after checking the interpreter itself.
``-I`` keeps this folder off ``sys.path``; the verifier bundle (``orharbor.zip``,
or its tree in a flat tests folder) is put there only after every file here
matches ``manifest.json`` (written at export: relative path, size and sha256 of
every file, and every folder), so a module planted beside it (``json.py``,
``orharbor/...``) is never imported. Inside a task
container (``--in-container``) an extra, missing or changed entry, a symbolic
link, FIFO, socket or device ends the run with status :data:`TAMPERED`, and
test.sh scores the failure reward with the reason this prints.

Standard library only. The exporter imports this file as
``orharbor.task_template.verify`` to write the manifest with the same code.
"""

import os
import sys

if __name__ == "__main__":  # nothing from this folder is importable before the check, even without -I,
    _HERE = os.path.dirname(os.path.abspath(__file__))  # and no bytecode is written into it, even without -B
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    sys.dont_write_bytecode = True

import hashlib  # noqa: E402
import json  # noqa: E402
import stat  # noqa: E402

MANIFEST = "manifest.json"
#: The verifier bundle: the orharbor package's verifier modules in one stored zip, imported from there.
BUNDLE = "orharbor.zip"
#: In a flat tests folder (``--for tinker``): which path of the tree each top-level file stands for.
LAYOUT = "layout.json"
#: Exit status when the folder differs from its manifest (test.sh: the failure reward, "tampered").
TAMPERED = 3
MAX_MANIFEST_BYTES = 16 << 20
#: Reasons reported before the check stops looking (a planted tree of any size costs this many entries).
MAX_REASONS = 5
_CHUNK = 1 << 20


def describe(folder: str) -> dict:
    """The manifest of ``folder``: every regular file (size, sha256) and every folder, ``manifest.json`` aside.

    Raises ValueError for a symbolic link or special file: an export holds neither.
    """
    files, dirs = {}, []
    for relative, path, info in _walk(folder, lambda relative: True):
        kind = _kind(info.st_mode)
        if kind == "folder":
            dirs.append(relative)
        elif kind == "file":
            if relative != MANIFEST:
                size, digest = _digest(path, info, None)
                files[relative] = {"size": size, "sha256": digest}
        else:
            raise ValueError(f"{path} is a {kind}: a task's tests/ holds only files and folders")
    return {"format": 1, "files": dict(sorted(files.items())), "dirs": sorted(dirs)}


def problems(folder: str) -> list[str]:
    """How ``folder`` differs from its ``manifest.json`` (at most :data:`MAX_REASONS`); empty when it matches."""
    shown = _shown(folder)
    try:
        top = os.lstat(folder)
    except OSError as exc:
        return [f"{shown}: {exc.strerror}"]
    if not stat.S_ISDIR(top.st_mode):
        return [f"{shown} is a {_kind(top.st_mode)}, not a folder"]
    try:
        manifest = _load_manifest(os.path.join(folder, MANIFEST))
    except (OSError, ValueError) as exc:
        return [f"{shown}/{MANIFEST} is unusable ({exc})"]
    try:
        return _differences(folder, manifest["files"], set(manifest["dirs"]))
    except OSError as exc:  # an entry that vanished or cannot be listed while we walk
        return [f"{_shown(exc.filename or folder)} cannot be checked ({exc.strerror})"]


def _differences(folder: str, files: dict, dirs: set) -> list[str]:
    reasons, seen = [], set()
    for relative, path, info in _walk(folder, lambda relative: relative in dirs):
        seen.add(relative)
        kind = _kind(info.st_mode)
        if relative == MANIFEST and kind == "file":
            continue
        if kind == "folder":
            if relative not in dirs:
                reasons.append(f"{_shown(path)} is a folder the manifest does not list")
        elif kind != "file":
            reasons.append(f"{_shown(path)} is a {kind}")
        elif relative not in files:
            reasons.append(f"{_shown(path)} is not in the manifest")
        else:
            expected = files[relative]
            try:
                size, digest = _digest(path, info, expected["size"])
            except OSError as exc:
                reasons.append(f"{_shown(path)} cannot be read ({exc.strerror})")
            else:
                if size != expected["size"]:
                    reasons.append(f"{_shown(path)} has {size} bytes, the manifest {expected['size']}")
                elif digest != expected["sha256"]:
                    reasons.append(f"{_shown(path)} differs from the manifest (sha256)")
        if len(reasons) >= MAX_REASONS:
            return reasons
    for relative in sorted((set(files) | dirs) - seen):
        reasons.append(f"{_shown(os.path.join(folder, relative))} is missing")
        if len(reasons) >= MAX_REASONS:
            break
    return reasons


def _walk(folder: str, descend):
    """(relative path, path, lstat) of every entry under ``folder``, links never followed.

    Goes into a sub-folder only if ``descend(relative)``; iterative, one folder open at a time, and
    never reads a whole folder ahead (a planted folder of a million entries costs what is looked at).
    """
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(os.path.join(folder, prefix) if prefix else folder) as entries:
            for entry in entries:
                relative = f"{prefix}/{entry.name}" if prefix else entry.name
                info = entry.stat(follow_symlinks=False)
                yield relative, entry.path, info
                if stat.S_ISDIR(info.st_mode) and descend(relative):
                    pending.append(relative)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "file"),
        (stat.S_ISDIR, "folder"),
        (stat.S_ISLNK, "symbolic link"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "device"),
        (stat.S_ISBLK, "device"),
    ):
        if test(mode):
            return name
    return "special file"


def _open_regular(path: str, info: os.stat_result) -> int:
    """A descriptor of the regular file ``info`` describes (never a link, never blocking on a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
        os.close(fd)
        raise OSError(0, "replaced while being read")
    return fd


def _digest(path: str, info: os.stat_result, expected_size: int | None) -> tuple[int, str]:
    """(size, sha256) of a regular file; past ``expected_size`` only the size is read on (one byte)."""
    if expected_size is not None and info.st_size != expected_size:
        return info.st_size, ""
    fd = _open_regular(path, info)
    digest, size = hashlib.sha256(), 0
    try:
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if expected_size is not None and size > expected_size:
                break
            digest.update(chunk)
    finally:
        os.close(fd)
    return size, digest.hexdigest()


def _load_manifest(path: str) -> dict:
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"a {_kind(info.st_mode)}, not a file")
    if info.st_size > MAX_MANIFEST_BYTES:
        raise ValueError(f"{info.st_size} bytes")
    fd = _open_regular(path, info)
    try:
        raw = os.read(fd, MAX_MANIFEST_BYTES + 1)
    finally:
        os.close(fd)
    manifest = json.loads(raw)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    dirs = manifest.get("dirs") if isinstance(manifest, dict) else None
    if (
        not isinstance(files, dict)
        or not isinstance(dirs, list)
        or not all(isinstance(d, str) for d in dirs)
        or not all(
            isinstance(v, dict) and type(v.get("size")) is int and isinstance(v.get("sha256"), str)
            for v in files.values()
        )
    ):
        raise ValueError("not an orharbor tests manifest")
    return manifest


def _shown(path: str) -> str:
    return path if path.isprintable() else ascii(path)[1:-1]


def unflatten(folder: str):
    """A flat tests folder (``orharbor export --for tinker``) rebuilt as its tree in a new private folder.

    ``layout.json`` maps each top-level name to the path it stands for; the other
    files keep their names. None when ``folder`` is not flat. Called after the
    manifest check, so every file copied is one the export wrote.
    """
    path = os.path.join(folder, LAYOUT)
    if not os.path.lexists(path):
        return None
    import shutil
    import tempfile

    with open(path, encoding="utf-8") as handle:
        layout = json.load(handle)
    root = tempfile.mkdtemp(prefix="orharbor-tests.")  # 0700, a name no one else can take
    for name in sorted(os.listdir(folder)):
        if name == LAYOUT:
            continue
        relative = layout.get(name, name)
        parts = relative.split("/")
        if relative.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"{LAYOUT} names {relative!r}, which is not a path inside the tests folder")
        os.makedirs(os.path.join(root, *parts[:-1]), mode=0o700, exist_ok=True)
        shutil.copyfile(os.path.join(folder, name), os.path.join(root, *parts))
    return root


def run() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if "--in-container" in sys.argv[1:]:
        found = problems(here)
        if found:
            print("verifier environment tampered: " + "; ".join(found), flush=True)
            return TAMPERED
    tree = unflatten(here)
    if tree is not None:
        sys.argv[1:1] = ["--tests-dir", tree]
    root = tree or here
    bundle = os.path.join(root, BUNDLE)  # a flat tests folder holds the bundle as a tree instead
    sys.path.insert(0, bundle if os.path.isfile(bundle) else root)
    from orharbor.verifiers.main import main

    try:
        return main()
    finally:
        if tree is not None:
            import shutil

            shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run())
