"""A Harbor environment on bubblewrap: a container stand-in, held to a container engine's defaults.

``harbor run -p tasks/ -a oracle -e orharbor.harbor_env:BubblewrapEnvironment``
runs Harbor's own trial flow on it, and ``orharbor check`` drives every task
through it. Each isolation concern lives in a module of its own, which opens
with the Docker default it mirrors and the number it enforces:

- :mod:`.rootfs`: the file system the task image would have, and no host path
  beyond it;
- :mod:`.users`: the image's accounts, a user namespace per sandbox (uids no
  other sandbox shares in the kernel's accounting), Docker's 14 capabilities
  for root;
- :mod:`.owners`: that namespace owned by an unprivileged uid of its own, as
  rootless podman's are, so the kernel's budgets are the sandbox's alone;
- :mod:`.cgroups`: a cgroup per sandbox with the task's memory and CPU, and
  rootless podman's 2,048 processes;
- :mod:`.network`: a network namespace of its own in every mode, the host's
  loopback out of reach;
- :mod:`.seccomp`: Docker's default seccomp profile, for PID 1 and for every
  command;
- :mod:`.enter`: ``docker exec``: one door per sandbox that has joined its
  namespaces through descriptors kept from the start and forks each command,
  whose spec comes over a socket and whose output goes into pipes, privileges
  dropped before anything of the sandbox runs;
- :mod:`.transfer`: uploads and downloads (``docker cp``), done by the host
  through a descriptor of the sandbox's root, no symlink followed, within
  depth, count and size limits;
- :mod:`.image`: the Dockerfile, carried out without building an image;
- :mod:`.layers`: the build cache, for the steps ``docker build`` runs once;
- :mod:`.debian`: the programs the image has (its Debian packages' files), no other host program.

What it copies from Harbor's Docker environment, because the verifier and the
attacks depend on it: one sandbox lives for the whole phase, its PID 1 is
``sh -c "sleep infinity"`` with the ``sleep`` as its child (Harbor's compose
keepalive under Debian's dash), so killing that ``sleep`` ends the sandbox
and everything in it; a process one ``exec`` leaves in the background is
still running at the next, and ``exec`` returns when its own process ends.

It must run as root, with bubblewrap and (for public networks) slirp4netns
installed, and a writable cgroup hierarchy (v1 or v2). What it needs of the host is
said where Harbor's environments say it: :meth:`BubblewrapEnvironment.preflight`
(root, bubblewrap, slirp4netns) and :meth:`BubblewrapEnvironment.preflight_tasks`
(the Debian packages the tasks' images install), ``capabilities`` (offline, no
allowlist, no switching after start) and ``resource_capabilities``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
import shlex
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities, EnvironmentResourceCapabilities
from harbor.models.trial.config import ResourceMode

from orharbor.errors import UserError
from orharbor.harbor_env import cgroups, debian, launch, layers, owners, rootfs, transfer, users
from orharbor.harbor_env.seccomp import compile_bpf
from orharbor.harbor_env.enter import ENTER_FAILED, NAMESPACES, Door, Target
from orharbor.harbor_env.image import Copy, ImagePlan, Run, read_dockerfile
from orharbor.harbor_env.network import UserModeNetwork, require_slirp4netns, resolv_conf
from orharbor.harbor_env.sandbox import SandboxUnavailable, installed_paths, require_bwrap
from orharbor.verifiers.removal import remove_path

#: At most this much of a command's stdout and of its stderr is returned; the rest is read and discarded.
OUTPUT_LIMIT = 16 * 1024 * 1024
START_TIMEOUT_S = 30.0
#: How long a timed-out command's process group may take to end once killed.
KILL_WAIT_S = 30.0
#: What the build's combined RUN steps print to stderr before the number of the one that failed.
_STEP_FAILED = "orharbor-build-step-failed "


async def _finish(work: asyncio.Future):
    """Await ``work`` (a thread's) to its end, even through cancellation, which is then raised after it."""
    cancelled = False
    while True:
        try:
            await asyncio.shield(work)
            break
        except asyncio.CancelledError:
            cancelled = True
            if work.done():
                break
    if cancelled:
        raise asyncio.CancelledError
    return work.result()


class BubblewrapEnvironment(BaseEnvironment):
    """One bubblewrap sandbox per Harbor "container", standing in for the task's Docker image."""

    _bwrap: asyncio.subprocess.Process | None = None
    _scratch: Path | None = None
    _pidfd: int | None = None
    _pid: int = 0
    _root: int | None = None  # the sandbox's root, for transfers (:mod:`.transfer`)
    _network: UserModeNetwork | None = None
    _door: Door | None = None  # the sandbox's entry for commands (:mod:`.enter`)
    #: A user namespace of the sandbox's own (:mod:`.users`); False only in tests that show what it stops.
    user_namespace: bool = True
    #: That namespace owned by an unprivileged uid of its own (:mod:`.owners`); False only in tests.
    own_owner: bool = True
    _owner: owners.Owner | None = None
    #: A cgroup and sized file systems (:mod:`.cgroups`, :mod:`.rootfs`); False only in tests that show what they stop.
    bounded: bool = True
    _cgroup: cgroups.Cgroup | None = None
    #: Take the image's pure steps from the build cache (:mod:`.layers`), as ``docker build`` does.
    build_cache: bool = True

    @staticmethod
    def type() -> str:
        return "bubblewrap"

    @classmethod
    def preflight(cls, kwargs: dict[str, Any] | None = None) -> None:
        """What the sandbox needs of this host, checked once before any trial (Harbor's preflight hook).

        Root, a bubblewrap that can create a sandbox here, and slirp4netns, which every public
        network (every export's agent phase) runs on. A refusal is Harbor's ``SystemExit`` with
        one line that says what to install; its cause is the :class:`~orharbor.errors.UserError`
        that line comes from, which ``orharbor check`` shows as it is.
        """
        super().preflight(kwargs)
        try:
            require_bwrap()
            require_slirp4netns()
        except UserError as exc:
            raise SystemExit(str(exc)) from exc

    @classmethod
    def preflight_tasks(cls, task_dirs: list[Path]) -> None:
        """What these tasks' images need of this host: every Debian package their Dockerfiles install.

        Checked once before any trial by ``orharbor check`` (each sandbox's start would refuse
        the image anyway); :class:`~orharbor.harbor_env.sandbox.SandboxUnavailable` names the
        ``apt-get install`` that fixes it.
        """
        try:
            debian.require_installed(
                [task / sub / "Dockerfile" for task in task_dirs for sub in ("environment", "tests")]
            )
        except debian.MissingPackages as exc:
            raise SandboxUnavailable(str(exc)) from None

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """Offline containers; no allowlist, and no change of network after start (one namespace per sandbox)."""
        return EnvironmentCapabilities(disable_internet=True)

    @classmethod
    def resource_capabilities(cls) -> EnvironmentResourceCapabilities:
        """Hard CPU and memory ceilings, fractional CPUs too: what Harbor's Docker environment declares."""
        return EnvironmentResourceCapabilities(cpu_limit=True, memory_limit=True, fractional_cpus=True)

    def _limits(self) -> cgroups.Limits:
        """The task's CPU and memory ceilings, as Harbor's Docker environment reads them (none where none is given)."""
        memory_mb = self._resource_limit_value("memory", auto_mode=ResourceMode.LIMIT)
        cpus = self._resource_limit_value("cpu", auto_mode=ResourceMode.LIMIT)
        return cgroups.Limits(
            memory_bytes=None if memory_mb is None else int(memory_mb) << 20, cpus=None if cpus is None else float(cpus)
        )

    def _storage_bytes(self) -> int | None:
        """The size of each of the sandbox's own file systems: the task's ``storage_mb``."""
        storage_mb = self._effective_storage_mb
        return None if storage_mb is None or not self.bounded else int(storage_mb) << 20

    def _validate_definition(self) -> None:
        dockerfile = self.environment_dir / "Dockerfile"
        if not dockerfile.is_file():
            raise FileNotFoundError(
                f"{dockerfile} not found: the bubblewrap environment stands in for a "
                "Dockerfile's image (prebuilt images and compose files are not supported)"
            )
        self._plan: ImagePlan = read_dockerfile(dockerfile)
        self._namespaces: dict[str, int] = {}

    # ------------------------------------------------------------------ lifecycle

    async def start(self, force_build: bool) -> None:
        """Start the sandbox (keepalive as PID 1), then carry out the Dockerfile's steps."""
        bwrap = require_bwrap()
        debian.programs(self._plan.apt_packages)  # the image's programs (MissingPackages when the host lacks some)
        self._scratch = Path(tempfile.mkdtemp(prefix="orh-bwrap-"))
        self._accounts = users.accounts(self._plan.users)
        self._seccomp = compile_bpf()
        loop = asyncio.get_running_loop()
        # the door's interpreter starts while bubblewrap builds the root; it joins the sandbox once PID 1 runs
        spawning = loop.run_in_executor(None, Door)
        try:
            if self.bounded:
                self._cgroup = cgroups.Cgroup(self._limits())
            # cancelled while bubblewrap starts, the start still ends (it is bounded), so stop sees its process
            await _finish(loop.run_in_executor(None, self._start_sandbox, bwrap))
        except BaseException:
            with contextlib.suppress(BaseException):
                await self._adopt_door(spawning)
            await self.stop(delete=True)
            raise
        try:
            await self._adopt_door(spawning)
        except BaseException:
            await self.stop(delete=True)
            raise
        await self._wait_until_ready()
        assert self._pidfd is not None
        self._root = transfer.open_root(self._pid, self._pidfd)
        if not self._network_disabled:  # after bubblewrap has set up the namespace's loopback
            self._network = await loop.run_in_executor(None, UserModeNetwork.attach, self._namespaces["net"])
        await self._build()
        await self.ensure_dirs(self._mount_targets(writable_only=True))

    async def _adopt_door(self, spawning: asyncio.Future) -> None:
        """Wait for the door's start to end (even through cancellation, raised after) and keep the door for stop."""
        try:
            self._door = await _finish(spawning)
        except BaseException:
            if spawning.done() and not spawning.cancelled() and spawning.exception() is None:
                self._door = spawning.result()
            raise

    def _start_sandbox(self, bwrap: str) -> None:
        """bubblewrap in a fresh mapped user namespace, its namespaces kept as descriptors before it runs."""
        assert self._scratch is not None
        files = {name: launch.readable(text.encode()) for name, text in self._generated_etc().items()}
        seccomp = launch.readable(self._seccomp)
        config = self._scratch / "pyvenv.cfg"
        config.write_text(rootfs.pyvenv_cfg())
        config.chmod(0o644)
        mounts = self._mounts_args(files, config)
        self._made = rootfs.made_paths(mounts)
        args = [*self._namespace_args(), *mounts, "--seccomp", str(seccomp), *users.bwrap_capability_args()]

        owner = None
        if self.own_owner and self.user_namespace:
            self._owner = owners.lease()
            owner = self._owner.uid

        def keep(pid: int) -> None:
            if self._cgroup is not None:  # before it runs anything: all it starts is counted there
                self._cgroup.join(pid)
            self._pid = pid
            self._pidfd = os.pidfd_open(pid)
            for name in NAMESPACES:
                if name != "user" or self.user_namespace:
                    self._namespaces[name] = os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)

        keepalive = ["sh", "-c", "sleep infinity"]
        self._popen = launch.start_bwrap(
            bwrap,
            args,
            launch.as_root(keepalive) if owner is not None else keepalive,
            (seccomp, *files.values()),
            before_release=keep,
            user_namespace=self.user_namespace,
            owner=owner,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def _generated_etc(self) -> dict[str, str]:
        hostname = self.session_id[:63] or "sandbox"
        return {
            "passwd": users.passwd(self._accounts),
            "group": users.group(self._accounts),
            "shadow": users.shadow(self._accounts),
            "hostname": hostname + "\n",
            "hosts": f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t{hostname}\n",
            "resolv.conf": resolv_conf(public=not self._network_disabled),
        }

    async def stop(self, delete: bool) -> None:
        """End the sandbox and everything in it, its network, and remove its scratch folder.

        The work runs to its end in a thread even when the caller is cancelled
        (a Ctrl-C cancels every trial, and asyncio.run cancels again what is
        left): a stop cut off halfway would leave the sandbox or its files behind.
        """
        await _finish(asyncio.get_running_loop().run_in_executor(None, self._stop_now))

    def _stop_now(self) -> None:
        popen = getattr(self, "_popen", None)
        if self._pidfd is not None:  # the sandbox's PID 1: its end ends every process in its namespace
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        if popen is not None and popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()
        if popen is not None and popen.stderr is not None:
            popen.stderr.close()
        if self._door is not None:
            self._door.close()
            self._door = None
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if self._network is not None:
            self._network.close()
            self._network = None
        for fd in [*self._namespaces.values(), *(fd for fd in (self._pidfd, self._root) if fd is not None)]:
            os.close(fd)
        self._namespaces, self._pidfd, self._root = {}, None, None
        if self._owner is not None:  # only once nothing of the sandbox, its namespaces included, is held
            self._owner.release()
            self._owner = None
        if self._scratch is not None:
            remove_path(str(self._scratch))  # iterative: the sandbox may hold folder chains of any depth
            self._scratch = None

    @property
    def is_alive(self) -> bool:
        """Whether the sandbox's PID 1 still runs (the keepalive has not been ended)."""
        if self._pidfd is None:
            return False
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return not readable

    async def _wait_until_ready(self) -> None:
        """Wait until bubblewrap has built the root and exec'd PID 1, then until a command runs in it.

        Until PID 1 has exec'd its command its mount namespace may still show
        the host's root (before ``pivot_root``): a command entered then would
        run as the sandbox's root on host files. So nothing enters before
        PID 1 stops being ``bwrap`` (read while its pidfd says it is alive, so
        a recycled pid is never read).
        """
        deadline = time.monotonic() + START_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline and self.is_alive and not self._pid1_has_exec_d():
            await asyncio.sleep(0.005)
        if self.is_alive and self._pid1_has_exec_d():
            self._door = await _finish(asyncio.get_running_loop().run_in_executor(None, self._open_door))
        while time.monotonic() < deadline and self.is_alive:
            result = await self._run(["true"], cwd="/", env=None, timeout_sec=10, user="root")
            if result.return_code == 0:
                return
            last = result.stderr or ""
            await asyncio.sleep(0.01)
        raise RuntimeError(f"the bubblewrap sandbox did not become ready: {last.strip() or 'it exited'}")

    def _open_door(self) -> Door:
        """The door started with the sandbox, joined to it now that PID 1 runs."""
        assert self._door is not None
        procs = self._cgroup.procs_files() if self._cgroup is not None else ()
        try:
            self._door.join(self._namespaces, self._seccomp, cgroup_procs=procs)
        finally:
            for fd in procs:
                os.close(fd)
        return self._door

    def _pid1_has_exec_d(self) -> bool:
        """Whether the sandbox's PID 1 runs its own command yet (its name is no longer ``bwrap``)."""
        try:
            with open(f"/proc/{self._pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            return False
        return self.is_alive and name not in ("", "bwrap")

    async def _build(self) -> None:
        """COPY and RUN steps, as root, in order (what ``docker build`` would do offline).

        Consecutive RUN steps go through the door as one command (each in a
        subshell of its own, from its own folder, as a RUN is), so a step costs a
        fork, not an exec; the first that fails ends the build, named.
        """
        steps: list[tuple[str, str]] = []
        if self._owner is not None:  # what bubblewrap made as the owner becomes root's, as in an image
            paths = " ".join(shlex.quote(path) for path in [*self._made, "/dev"])
            steps.append(
                (
                    f"find -P {paths} /dev/* -maxdepth 0 -uid {owners.OWNER_INSIDE} "
                    f"-exec chown -h 0:0 {{}} + 2>/dev/null; true",
                    "/",
                )
            )
        for name in self._plan.users:
            account = self._accounts[name]
            home = shlex.quote(account.home)
            steps.append((f"mkdir -p {home} && chown {account.uid}:{account.gid} {home} && chmod 755 {home}", "/"))
        ours = len(steps)  # these touch only what bubblewrap made and the homes: a cached layer need not wait
        layout = (layers.host_identity(rootfs.host_python()), self._storage_bytes()) if self.build_cache else None
        for index, step in enumerate(self._plan.steps):
            cache_key = layers.key(self._plan, index, layout) if self.build_cache else None
            if isinstance(step, Run) and cache_key is None:
                steps.append((step.command, step.workdir))
                continue
            layer = layers.cached(cache_key) if cache_key else None
            after = layers.refresh(step) if layer is not None and isinstance(step, Run) else None
            if layer is not None and len(steps) == ours:
                await self._replay(layer)
                steps += [after] if after else []
                continue
            await self._run_steps(steps)
            steps, ours = [], 0
            if isinstance(step, Copy):
                if step.source.is_dir():
                    await self.upload_dir(step.source, step.target)
                else:
                    await self.upload_file(step.source, step.target)
                continue
            if layer is not None:
                await self._replay(layer)
                steps += [after] if after else []
                continue
            await self._checked(step.command, cwd=step.workdir)
            if cache_key:
                layers.keep(cache_key, await self._layer(layers.outputs(step) or ()))
        await self._run_steps(steps)

    async def _run_steps(self, steps: list[tuple[str, str]]) -> None:
        """Carry out RUN steps ``(command, folder)`` in order, in one command; the first failure raises, naming it."""
        if not steps:
            return
        script = "\n".join(
            f"(cd {shlex.quote(cwd)} && {command}\n) || {{ s=$?; echo '{_STEP_FAILED}{number}' >&2; exit $s; }}"
            for number, (command, cwd) in enumerate(steps)
        )
        result = await self.exec(script, cwd="/", user="root", timeout_sec=600)
        if result.return_code != 0:
            failed = re.findall(rf"^{_STEP_FAILED}(\d+)$", result.stderr or "", flags=re.MULTILINE)
            command = steps[int(failed[-1])][0] if failed else script
            stderr = re.sub(rf"^{_STEP_FAILED}\d+\n?", "", result.stderr or "", flags=re.MULTILINE)
            raise RuntimeError(f"image step failed (exit {result.return_code}): {command}\n{stderr}")

    async def _layer(self, folders: tuple[str, ...]) -> layers.Layer:
        """What a cacheable step wrote: a host copy of each of ``folders``, read through the sandbox's root."""
        kept = []
        for folder in folders:
            copy = layers.new_folder()
            await self.download_dir(folder, copy)
            layers.settle(copy)
            kept.append((folder, copy))
        return layers.Layer(tuple(kept))

    async def _replay(self, layer: layers.Layer) -> None:
        """Write a cached step's folders as it left them: root's, files 0644 and folders 0755."""
        for folder, copy in layer.folders:
            await self.upload_dir(copy, folder)

    async def _checked(self, command: str, cwd: str = "/") -> None:
        result = await self.exec(command, cwd=cwd, user="root", timeout_sec=600)
        if result.return_code != 0:
            raise RuntimeError(f"image step failed (exit {result.return_code}): {command}\n{result.stderr or ''}")

    # ------------------------------------------------------------------ sandbox layout

    def _mounts_args(self, etc: dict[str, int], config: Path) -> list[str]:
        python = rootfs.host_python()
        size = self._storage_bytes()
        args = [
            *rootfs.root_args(size),
            *rootfs.base_args(),
            *debian.program_args(self._plan.apt_packages),
            *rootfs.etc_args(etc),
            *rootfs.scratch_args(shm=rootfs.SHM_SIZE if self.bounded else None),
            *rootfs.python_args(python, _packages(self._plan.local_packages), size=size),
        ]
        for path, packages in self._plan.venvs.items():
            args += rootfs.venv_args(path, _packages(packages), config)
        return args

    def _namespace_args(self) -> list[str]:
        return [
            "--unshare-pid",
            "--as-pid-1",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--hostname",
            self.session_id[:63] or "sandbox",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
        ]

    # ------------------------------------------------------------------ exec

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        """``bash -c command`` inside the running sandbox, as ``user`` (default: the image's user, else root)."""
        return await self._run(
            ["bash", "-c", command],
            cwd=cwd or self._plan.workdir,
            env=self._merge_env(env),
            timeout_sec=timeout_sec,
            user=self._resolve_user(user),
        )

    async def _run(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str] | None,
        timeout_sec: float | None,
        user: str | int | None,
        stdin: Path | None = None,
        stdout: Path | None = None,
    ) -> ExecResult:
        """``argv`` through the sandbox's door; stdout and stderr come back through pipes (``stdout``: to a file)."""
        if not self.is_alive or self._door is None or not self._door.joined:
            return ExecResult(stdout="", stderr="the sandbox is not running (its PID 1 has exited)", return_code=125)
        account = self._user(user if user is not None else self._plan.user)
        variables = {
            **self._plan.env,
            "HOME": account.home,
            "HOSTNAME": self.session_id[:63],
            "USER": account.name,
            **(env or {}),
        }
        loop = asyncio.get_running_loop()
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(open(stdout, "wb")) if stdout else None
            out = stack.enter_context(_Capture(loop, sink))
            err = stack.enter_context(_Capture(loop))
            with open(stdin or os.devnull, "rb") as source:
                try:
                    reply = self._door.submit(
                        Target(account.uid, account.gid, cwd, variables),
                        argv,
                        source.fileno(),
                        out.write_end,
                        err.write_end,
                    )
                except OSError as exc:  # the door is gone: so is the sandbox, or it is going
                    return ExecResult(
                        stdout="",
                        stderr=f"the sandbox cannot be entered: {exc}",
                        return_code=125 if not self.is_alive else ENTER_FAILED,
                    )
                finally:
                    out.close_write_end()
                    err.close_write_end()
            with reply:
                reply.setblocking(False)
                try:
                    answer = await asyncio.wait_for(loop.sock_recv(reply, 4096), timeout=timeout_sec)
                except asyncio.TimeoutError:
                    with contextlib.suppress(OSError):  # the command's process group ends inside the sandbox
                        reply.send(b"kill")
                        await asyncio.wait_for(loop.sock_recv(reply, 4096), timeout=KILL_WAIT_S)
                    raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
            code = json.loads(answer)["exit"] if answer else ENTER_FAILED
            written = out.text()  # drains what the pipe still holds: into the sink, too
            result = ExecResult(stdout=None if stdout else written, stderr=err.text(), return_code=code)
        if code == ENTER_FAILED and not self.is_alive:
            result = ExecResult(
                stdout=result.stdout, stderr="the sandbox is not running (its PID 1 has exited)", return_code=125
            )
        callback = self._output_callback()
        if callback is not None:
            if result.stdout:
                await callback(result.stdout, "stdout")
            if result.stderr:
                await callback(result.stderr, "stderr")
        return result

    def _user(self, user: str | int | None) -> users.Account:
        """The account of a user name or uid; root when ``None``."""
        if user is None:
            return self._accounts["root"]
        if isinstance(user, int) or str(user).isdigit():
            for account in self._accounts.values():
                if account.uid == int(user):
                    return account
            return users.Account(str(user), int(user), int(user), "/")
        if user not in self._accounts:
            raise ValueError(f"unknown user {user!r} in this image (known: {', '.join(sorted(self._accounts))})")
        return self._accounts[user]

    # ------------------------------------------------------------------ transfers

    def _sandbox_root(self) -> int:
        """The descriptor of the sandbox's root, while the sandbox runs."""
        if self._root is None or not self.is_alive:
            raise RuntimeError("the sandbox is not running (its PID 1 has exited): nothing to copy to or from")
        return self._root

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        """``docker cp`` in: the host file lands at ``target_path``, root-owned, its mode kept."""
        await transfer.upload_file(self._sandbox_root(), self.logger, Path(source_path), target_path)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        """``docker cp source/. target``: the folder's contents, root-owned, modes kept."""
        await transfer.upload_dir(self._sandbox_root(), self.logger, Path(source_dir), target_dir)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        """``docker cp`` out, of a regular file only."""
        await transfer.download_file(self._sandbox_root(), self.logger, source_path, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        """``docker cp source/. target``, within :mod:`.transfer`'s limits."""
        await transfer.download_dir(self._sandbox_root(), self.logger, source_dir, Path(target_dir))


def _packages(names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(host path, site-packages name) of ``names`` and what they require, from this machine's packages."""
    return [(str(path), path.name) for path in installed_paths(tuple(names))] if names else []


class _Capture:
    """A pipe for one command's stdout or stderr, drained as it fills: the first :data:`OUTPUT_LIMIT` bytes kept.

    Like ``docker exec``'s streams, and unlike a host file, nothing the command
    writes takes host disk: what is past the limit is read and dropped, and
    once the command has ended the pipe is closed, so a process left in the
    background that still writes to it gets EPIPE. With a ``sink`` every byte
    goes to that file instead (the tests' own transfers).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, sink=None) -> None:
        self._loop, self._sink = loop, sink
        self._read_end, self.write_end = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(self._read_end, False)
        self._kept = bytearray()
        self._open = True
        loop.add_reader(self._read_end, self._read)

    def _read(self, budget: int = 1 << 62) -> None:
        """Read what the pipe holds now (at most ``budget`` bytes)."""
        while self._open and budget > 0:
            try:
                chunk = os.read(self._read_end, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                self._stop_reading()
                return
            budget -= len(chunk)
            if self._sink is not None:
                self._sink.write(chunk)
            elif len(self._kept) < OUTPUT_LIMIT:
                self._kept += chunk[: OUTPUT_LIMIT - len(self._kept)]

    def _stop_reading(self) -> None:
        if self._open:
            self._loop.remove_reader(self._read_end)
            self._open = False

    def close_write_end(self) -> None:
        if self.write_end >= 0:
            os.close(self.write_end)
            self.write_end = -1

    def text(self) -> str:
        """What was kept (nothing with a sink), after reading what the pipe still holds: what the command wrote
        before it ended, which the loop may not have read yet; a writer left behind is cut."""
        self._read(budget=2 * OUTPUT_LIMIT)
        return self._kept.decode(errors="replace")

    def __enter__(self) -> _Capture:
        return self

    def __exit__(self, *exc) -> None:
        self._stop_reading()
        self.close_write_end()
        os.close(self._read_end)


__all__ = ["BubblewrapEnvironment"]
