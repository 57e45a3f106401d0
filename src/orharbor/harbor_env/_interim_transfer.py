"""Interim transfers (today's behaviour, replaced by harbor_env/transfer.py)."""
from __future__ import annotations

import shlex
import shutil
import tarfile
import tempfile
import os
from pathlib import Path, PurePosixPath


async def _upload(env, source: Path, target_dir: str, arcname: str) -> None:
    with tempfile.NamedTemporaryFile(dir=env._scratch, suffix=".tar") as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            tar.add(source, arcname=arcname)
        archive.flush()
        quoted = shlex.quote(target_dir)
        result = await env._run(["sh", "-c", f"mkdir -p -- {quoted} && tar -x --no-same-owner -f - -C {quoted}"],
                                cwd="/", env=None, timeout_sec=600, user="root", stdin=Path(archive.name))
    if result.return_code != 0:
        raise RuntimeError(f"upload of {source} to {target_dir} failed: {result.stderr}")


async def upload_file(env, source: Path, target_path: str) -> None:
    target = PurePosixPath(target_path)
    await _upload(env, source, str(target.parent), target.name)


async def upload_dir(env, source: Path, target_dir: str) -> None:
    await _upload(env, source, target_dir, ".")


async def _packed(env, directory: str, name: str, path: Path):
    result = await env._run(["tar", "-c", "-f", "-", "-C", directory, "--", name], cwd="/", env=None,
                            timeout_sec=600, user="root", stdout=path)
    if result.return_code != 0:
        raise RuntimeError(f"could not copy {PurePosixPath(directory) / name} out of the sandbox: {result.stderr}")


async def download_file(env, source_path: str, target: Path) -> None:
    source = PurePosixPath(source_path)
    with tempfile.NamedTemporaryFile(dir=env._scratch, suffix=".tar") as archive:
        await _packed(env, str(source.parent), source.name, Path(archive.name))
        with tarfile.open(archive.name) as tar:
            member = tar.next()
            if member is None:
                raise RuntimeError(f"{source_path}: nothing to copy")
            _extract_one(tar, member, target)


async def download_dir(env, source_dir: str, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=env._scratch, suffix=".tar") as archive:
        await _packed(env, source_dir, ".", Path(archive.name))
        with tarfile.open(archive.name) as tar:
            tar.extractall(target, filter=_host_filter)


def _host_filter(member, dest_path):
    if member.isdev():
        return None
    member = tarfile.tar_filter(member, dest_path)
    return member.replace(uid=os.getuid(), gid=os.getgid(), uname="", gname="", deep=False)


def _extract_one(tar, member, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        if target.is_dir() and not target.is_symlink():
            raise RuntimeError(f"{target} is a folder")
        target.unlink()
    if member.issym():
        os.symlink(member.linkname, target)
    elif member.isfifo():
        os.mkfifo(target, 0o644)
    elif member.isfile():
        source = tar.extractfile(member)
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        target.chmod(member.mode & 0o755)
    else:
        raise RuntimeError(f"{member.name} is not a regular file")
