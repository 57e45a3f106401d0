"""A Harbor environment on bubblewrap: a container stand-in for machines with no container engine.

``harbor run -p tasks/ -a oracle -e orharbor.harbor_env:BubblewrapEnvironment``
runs Harbor's own trial flow on it, and ``orharbor check`` drives every task
through it. What it copies from Harbor's Docker environment, because the
verifier and the attacks depend on it:

- one sandbox lives for the whole phase, and its PID 1 is ``sh -c "sleep
  infinity"`` with the ``sleep`` as its child (Harbor's compose keepalive under
  Debian's dash): killing that ``sleep`` ends the sandbox and everything in it;
- ``exec`` enters that sandbox (``nsenter``), so a process one ``exec`` leaves
  in the background is still running at the next one, and it returns when its
  own process ends, whatever the background holds open;
- users come from the image's ``/etc/passwd`` (``useradd`` in the Dockerfile
  adds them), root keeps only Docker's default capabilities;
- uploads land root-owned with their modes kept (``docker cp``), downloads copy
  symlinks as symlinks and skip device files;
- ``no-network`` is a fresh network namespace; ``public`` is the host's network.

The image is never built: :mod:`orharbor.harbor_env.image` reads the
Dockerfile, host ``/usr`` and ``/etc`` stand in for the base image, and the
Python packages the Dockerfile would install are mirrored from this machine.
It must run as root (entering namespaces needs it), with bubblewrap installed.
CPU and memory limits are not enforced.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

from orharbor.harbor_env.image import Copy, ImagePlan, read_dockerfile
from orharbor.check.sandbox import Venv, build_venv, parents_args, require_bwrap, system_binds, venv_args
from orharbor.verifiers.removal import remove_path

#: Docker's default capability set for root in a container.
DOCKER_CAPABILITIES = ("chown", "dac_override", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap",
                       "net_bind_service", "net_raw", "sys_chroot", "mknod", "audit_write", "setfcap")
#: At most this much of a command's stdout and of its stderr is returned.
OUTPUT_LIMIT = 16 * 1024 * 1024
FIRST_USER_UID = 1000
START_TIMEOUT_S = 30.0


class BubblewrapEnvironment(BaseEnvironment):
    """One bubblewrap sandbox per Harbor "container", standing in for the task's Docker image."""

    _bwrap: asyncio.subprocess.Process | None = None
    _scratch: Path | None = None

    @staticmethod
    def type() -> str:
        return "bubblewrap"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        dockerfile = self.environment_dir / "Dockerfile"
        if not dockerfile.is_file():
            raise FileNotFoundError(f"{dockerfile} not found: the bubblewrap environment stands in for a "
                                    "Dockerfile's image (prebuilt images and compose files are not supported)")
        self._plan: ImagePlan = read_dockerfile(dockerfile)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, force_build: bool) -> None:
        """Start the sandbox (keepalive as PID 1), then carry out the Dockerfile's steps."""
        bwrap = require_bwrap()
        self._scratch = Path(tempfile.mkdtemp(prefix="orh-bwrap-"))
        self._users = _user_table(self._plan.users)
        etc = self._scratch / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(_passwd(self._users))
        (etc / "group").write_text(_group(self._users))
        (etc / "hostname").write_text(self.session_id[:63] + "\n")
        info_read, info_write = os.pipe()
        args = [bwrap, *self._mounts_args(etc), *self._namespace_args(),
                "--info-fd", str(info_write), "sh", "-c", "sleep infinity"]
        try:
            self._bwrap = await asyncio.create_subprocess_exec(
                *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE, pass_fds=(info_write,), start_new_session=True)
        finally:
            os.close(info_write)
        info = await asyncio.get_running_loop().run_in_executor(None, _read_all, info_read)
        try:
            details = json.loads(info)
        except ValueError:
            stderr = (await self._bwrap.stderr.read()).decode(errors="replace") if self._bwrap.stderr else ""
            raise RuntimeError(f"bubblewrap did not start the sandbox: {stderr.strip() or info!r}") from None
        self._pid = int(details["child-pid"])
        self._pid_namespace = details.get("pid-namespace")
        await self._wait_until_ready()
        await self._build()
        await self.ensure_dirs(self._mount_targets(writable_only=True))

    async def stop(self, delete: bool) -> None:
        """End the sandbox and everything in it, and remove its scratch folder."""
        if self._bwrap is not None and self._bwrap.returncode is None:
            try:
                os.killpg(self._bwrap.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await self._bwrap.wait()
        if self._scratch is not None:
            remove_path(str(self._scratch))  # iterative: the sandbox may hold folder chains of any depth
            self._scratch = None

    @property
    def is_alive(self) -> bool:
        """Whether the sandbox's PID 1 still runs (the keepalive has not been ended)."""
        if self._bwrap is None or self._bwrap.returncode is not None:
            return False
        try:
            namespace = os.stat(f"/proc/{self._pid}/ns/pid").st_ino
        except OSError:
            return False
        return self._pid_namespace is None or namespace == self._pid_namespace

    async def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline:
            if self._bwrap is not None and self._bwrap.returncode is not None:
                break
            try:
                comm = Path(f"/proc/{self._pid}/comm").read_text().strip()
            except OSError:
                comm = ""
            if comm and comm != "bwrap":
                result = await self._run(["true"], cwd="/", env=None, timeout_sec=10, user="root")
                if result.return_code == 0:
                    return
                last = result.stderr
            await asyncio.sleep(0.01)
        stderr = ""
        if self._bwrap is not None and self._bwrap.returncode is not None and self._bwrap.stderr:
            stderr = (await self._bwrap.stderr.read()).decode(errors="replace")
        raise RuntimeError(f"the bubblewrap sandbox did not become ready: {(stderr or last or '').strip()}")

    async def _build(self) -> None:
        """COPY and RUN steps, as root, in order (what ``docker build`` would do offline)."""
        for user in self._plan.users:
            _, uid, gid, home = self._users[user]
            await self._checked(f"mkdir -p {shlex.quote(home)} && chown {uid}:{gid} {shlex.quote(home)} "
                                f"&& chmod 755 {shlex.quote(home)}")
        for step in self._plan.steps:
            if isinstance(step, Copy):
                if step.source.is_dir():
                    await self.upload_dir(step.source, step.target)
                else:
                    await self.upload_file(step.source, step.target)
            else:
                await self._checked(step.command, cwd=step.workdir)

    async def _checked(self, command: str, cwd: str = "/") -> None:
        result = await self.exec(command, cwd=cwd, user="root", timeout_sec=600)
        if result.return_code != 0:
            raise RuntimeError(f"image step failed (exit {result.return_code}): {command}\n{result.stderr or ''}")

    # ------------------------------------------------------------------ sandbox layout

    def _mounts_args(self, etc: Path) -> list[str]:
        mirror = _mirror()
        args = system_binds()
        for name in ("passwd", "group", "hostname"):
            args += ["--ro-bind", str(etc / name), f"/etc/{name}"]
        base = Path(sys.base_prefix)
        args += [*parents_args(str(base)), "--ro-bind", str(base), str(base)]
        if self._plan.local_packages:
            args += venv_args(mirror.venv(self._plan.local_packages), "/usr/local")
        else:
            python = f"{base}/bin/python{sys.version_info.major}.{sys.version_info.minor}"
            args += ["--tmpfs", "/usr/local", "--dir", "/usr/local/bin"]
            for name in ("python3", "python", f"python{sys.version_info.major}.{sys.version_info.minor}"):
                args += ["--symlink", python, f"/usr/local/bin/{name}"]
        for path, packages in self._plan.venvs.items():
            args += [*parents_args(path), *venv_args(mirror.venv(packages), path)]
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",
                 "--perms", "1777", "--dir", "/tmp", "--perms", "1777", "--dir", "/var/tmp",
                 "--dir", "/home", "--dir", "/run", "--dir", "/root"]
        return args

    def _namespace_args(self) -> list[str]:
        args = ["--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts", "--hostname",
                self.session_id[:63] or "sandbox", "--die-with-parent", "--new-session", "--clearenv"]
        if self._network_disabled:
            args.append("--unshare-net")
        return args

    # ------------------------------------------------------------------ exec

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
        """``bash -c command`` inside the running sandbox, as ``user`` (default: the image's user, else root)."""
        return await self._run(["bash", "-c", command], cwd=cwd or self._plan.workdir,
                               env=self._merge_env(env), timeout_sec=timeout_sec, user=self._resolve_user(user))

    async def _run(self, argv: list[str], *, cwd: str, env: dict[str, str] | None, timeout_sec: float | None,
                   user: str | int | None, stdin: Path | None = None, stdout: Path | None = None) -> ExecResult:
        if not self.is_alive:
            return ExecResult(stdout="", stderr="the sandbox is not running (its PID 1 has exited)", return_code=125)
        name, uid, gid, home = self._user(user if user is not None else self._plan.user)
        variables = {**self._plan.env, "HOME": home, "HOSTNAME": self.session_id[:63], "USER": name,
                     **(env or {})}
        if uid == 0:
            identity = ["setpriv", "--bounding-set", "-all," + ",".join(f"+{c}" for c in DOCKER_CAPABILITIES)]
        else:
            identity = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
        full = ["nsenter", "--target", str(self._pid), "--mount", "--uts", "--ipc", "--net", "--pid", "--root",
                "--", "env", "-i", "-C", cwd, *(f"{k}={v}" for k, v in variables.items()), *identity, *argv]
        assert self._scratch is not None
        with tempfile.TemporaryDirectory(dir=self._scratch) as io:
            out_path = stdout or Path(io) / "stdout"
            err_path = Path(io) / "stderr"
            with open(out_path, "wb") as out, open(err_path, "wb") as err, \
                    open(stdin or os.devnull, "rb") as inp:
                process = await asyncio.create_subprocess_exec(*full, stdin=inp, stdout=out, stderr=err,
                                                               start_new_session=True)
                try:
                    code = await asyncio.wait_for(process.wait(), timeout=timeout_sec)
                except asyncio.TimeoutError:
                    process.kill()  # like killing `docker exec`: what runs inside keeps running
                    await process.wait()
                    raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
            result = ExecResult(stdout=None if stdout else _read_text(out_path), stderr=_read_text(err_path),
                                return_code=code)
        callback = self._output_callback()
        if callback is not None:
            if result.stdout:
                await callback(result.stdout, "stdout")
            if result.stderr:
                await callback(result.stderr, "stderr")
        return result

    def _user(self, user: str | int | None) -> tuple[str, int, int, str]:
        """(name, uid, gid, home) of a user name or uid; root when ``None``."""
        if user is None:
            return self._users["root"]
        if isinstance(user, int) or str(user).isdigit():
            for entry in self._users.values():
                if entry[1] == int(user):
                    return entry
            return (str(user), int(user), int(user), "/")
        if user not in self._users:
            raise ValueError(f"unknown user {user!r} in this image (known: {', '.join(sorted(self._users))})")
        return self._users[user]

    # ------------------------------------------------------------------ transfers

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        """Copy a host file to ``target_path``: root-owned, mode kept."""
        target = PurePosixPath(target_path)
        await self._upload(Path(source_path), str(target.parent), target.name)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        """Copy a host folder's contents into ``target_dir``: root-owned, modes kept."""
        await self._upload(Path(source_dir), target_dir, ".")

    async def _upload(self, source: Path, target_dir: str, arcname: str) -> None:
        assert self._scratch is not None
        with tempfile.NamedTemporaryFile(dir=self._scratch, suffix=".tar") as archive:
            with tarfile.open(fileobj=archive, mode="w") as tar:
                tar.add(source, arcname=arcname)
            archive.flush()
            quoted = shlex.quote(target_dir)
            result = await self._run(["sh", "-c", f"mkdir -p -- {quoted} && tar -x --no-same-owner -f - -C {quoted}"],
                                     cwd="/", env=None, timeout_sec=600, user="root", stdin=Path(archive.name))
        if result.return_code != 0:
            raise RuntimeError(f"upload of {source} to {target_dir} failed: {result.stderr}")

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        """Copy one file out: a symlink stays a symlink, a FIFO a FIFO; devices are refused."""
        source = PurePosixPath(source_path)
        async with self._packed(str(source.parent), source.name) as tar:
            member = tar.next()
            if member is None:
                raise RuntimeError(f"{source_path}: nothing to copy")
            _extract_one(tar, member, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        """Copy a folder's contents out (symlinks as symlinks, device files skipped), owned by this user."""
        target = Path(target_dir)
        target.mkdir(parents=True, exist_ok=True)
        async with self._packed(source_dir, ".") as tar:
            tar.extractall(target, filter=_host_filter)

    @contextlib.asynccontextmanager
    async def _packed(self, directory: str, name: str) -> AsyncIterator[tarfile.TarFile]:
        """``name`` in ``directory``, packed by tar inside the sandbox as root, opened here."""
        assert self._scratch is not None
        with tempfile.NamedTemporaryFile(dir=self._scratch, suffix=".tar") as archive:
            result = await self._run(["tar", "-c", "-f", "-", "-C", directory, "--", name], cwd="/", env=None,
                                     timeout_sec=600, user="root", stdout=Path(archive.name))
            if result.return_code != 0:
                raise RuntimeError(f"could not copy {PurePosixPath(directory) / name} out of the sandbox: "
                                   f"{result.stderr}")
            with tarfile.open(archive.name) as tar:
                yield tar


def _host_filter(member: tarfile.TarInfo, dest_path: str) -> tarfile.TarInfo | None:
    """``tarfile.tar_filter`` (nothing lands outside the target), minus devices, owned by this user."""
    if member.isdev():
        return None
    member = tarfile.tar_filter(member, dest_path)
    return member.replace(uid=os.getuid(), gid=os.getgid(), uname="", gname="", deep=False)


def _extract_one(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> None:
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
        assert source is not None
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        target.chmod(member.mode & 0o755)
    else:
        raise RuntimeError(f"{member.name} is not a regular file")


def _read_all(fd: int) -> bytes:
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    finally:
        os.close(fd)
    return data


def _read_text(path: Path) -> str:
    with open(path, "rb") as f:
        data = f.read(OUTPUT_LIMIT)
    return data.decode(errors="replace")


# ---------------------------------------------------------------------- users


def _user_table(extra: list[str]) -> dict[str, tuple[str, int, int, str]]:
    """name -> (name, uid, gid, home): the base image's system users, then the Dockerfile's."""
    table: dict[str, tuple[str, int, int, str]] = {}
    for line in Path("/etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if len(fields) >= 6 and fields[2].isdigit() and (int(fields[2]) < FIRST_USER_UID or fields[0] == "nobody"):
            table[fields[0]] = (fields[0], int(fields[2]), int(fields[3]), fields[5])
    table.setdefault("root", ("root", 0, 0, "/root"))
    uid = FIRST_USER_UID
    for name in extra:
        table[name] = (name, uid, uid, f"/home/{name}")
        uid += 1
    return table


def _passwd(users: dict[str, tuple[str, int, int, str]]) -> str:
    shell = {0: "/bin/bash"}
    return "".join(f"{n}:x:{u}:{g}::{h}:{shell.get(u, '/bin/bash' if u >= FIRST_USER_UID and n != 'nobody' else '/usr/sbin/nologin')}\n"
                   for n, u, g, h in users.values())


def _group(users: dict[str, tuple[str, int, int, str]]) -> str:
    groups: dict[int, str] = {}
    for line in Path("/etc/group").read_text().splitlines():
        fields = line.split(":")
        if len(fields) >= 3 and fields[2].isdigit() and (int(fields[2]) < FIRST_USER_UID or fields[0] == "nogroup"):
            groups[int(fields[2])] = fields[0]
    for name, _, gid, _ in users.values():
        groups.setdefault(gid, name)
    return "".join(f"{name}:x:{gid}:\n" for gid, name in sorted(groups.items()))


# ---------------------------------------------------------------------- package mirror


class _Mirror:
    """Venvs assembled from this machine's packages, one per package set, kept for the process."""

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="orh-mirror-"))
        os.chmod(self._root, 0o755)
        self._venvs: dict[tuple[str, ...], Venv] = {}
        self._lock = threading.Lock()
        atexit.register(shutil.rmtree, self._root, True)

    def venv(self, packages: tuple[str, ...]) -> Venv:
        key = tuple(sorted(set(packages)))
        with self._lock:
            if key not in self._venvs:
                self._venvs[key] = build_venv(self._root / f"venv-{len(self._venvs)}", key)
            return self._venvs[key]


_MIRROR: _Mirror | None = None


def _mirror() -> _Mirror:
    global _MIRROR
    if _MIRROR is None:
        _MIRROR = _Mirror()
    return _MIRROR


__all__ = ["BubblewrapEnvironment"]
