"""The entry as it was before each sandbox had a door: the defence removed, for the mutation tests.

Each command started a host Python of its own whose argv held the whole spec,
environment included (readable in ``/proc/PID/cmdline`` by any host user, and by
sandbox processes once the entering child had joined the PID namespace); its
stdout and stderr were files in the host's scratch folder; a timeout killed only
the host side, so the command went on inside the sandbox.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

from harbor.environments.base import ExecResult

from orharbor.harbor_env import BubblewrapEnvironment
from orharbor.harbor_env.enter import KEYCTL_SYSCALL, NAMESPACES, Target, host_python

PROGRAM = r"""
import ctypes, json, os, signal, sys  # every module before setns: the host's library is not there after
spec = json.loads(sys.argv[1])
argv = sys.argv[2:]
def fail(what, exc):
    os.write(2, f"orharbor-enter: {what}: {exc}\n".encode())
    os._exit(126)
flags = {"user": os.CLONE_NEWUSER, "mnt": os.CLONE_NEWNS, "uts": os.CLONE_NEWUTS, "ipc": os.CLONE_NEWIPC,
         "net": os.CLONE_NEWNET, "pid": os.CLONE_NEWPID}
for name, fd in spec["namespaces"]:
    try:
        os.setns(fd, flags[name])
    except OSError as exc:
        fail(f"cannot join the sandbox's {name} namespace", exc)
    os.close(fd)
child = os.fork()
if child:
    os.close(spec["seccomp"])
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(spec["keyctl"], 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a fresh anonymous one, as runc does
    fail("cannot join a fresh session keyring", OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno())))
try:
    os.chdir(spec["cwd"])
except OSError as exc:
    fail(f"cannot change to {spec['cwd']}", exc)
with os.fdopen(spec["seccomp"], "rb") as f:
    program = f.read()
class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
buffer = ctypes.create_string_buffer(program, len(program))
prog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
if len(program) % 8 or not program or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
    fail("cannot install the seccomp filter", OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno())))
keep = set(spec["capabilities"])
last = int(open("/proc/sys/kernel/cap_last_cap").read())
for cap in range(last + 1):
    if cap not in keep and libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
        fail(f"cannot drop capability {cap}", OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno())))
try:
    os.setgroups([])
    os.setresgid(spec["gid"], spec["gid"], spec["gid"])
    os.setresuid(spec["uid"], spec["uid"], spec["uid"])
except OSError as exc:
    fail(f"cannot become uid {spec['uid']}", exc)
for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores both, and exec would pass that on
    signal.signal(number, signal.SIG_DFL)
paths = [argv[0]] if "/" in argv[0] else [d.rstrip("/") + "/" + argv[0]
                                          for d in spec["env"].get("PATH", "/usr/bin:/bin").split(":") if d]
error = FileNotFoundError(2, "command not found")
for path in paths:
    try:
        os.execve(path, argv, spec["env"])
    except OSError as exc:
        if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            error = exc
os.write(2, f"{argv[0]}: {error.strerror}\n".encode())
os._exit(127 if isinstance(error, FileNotFoundError) else 126)
"""


def enter_argv(namespace_fds: dict[str, int], seccomp_fd: int, target: Target, argv: list[str]) -> list[str]:
    """The old host command: the spec, environment included, as an argument."""
    spec = {
        "namespaces": [(name, namespace_fds[name]) for name in NAMESPACES if name in namespace_fds],
        "seccomp": seccomp_fd,
        "keyctl": KEYCTL_SYSCALL[os.uname().machine],
        "uid": target.uid,
        "gid": target.gid,
        "cwd": target.cwd,
        "env": target.env,
        "capabilities": target.capabilities,
    }
    return [host_python(), "-I", "-S", "-c", PROGRAM, json.dumps(spec), *argv]


class LegacyEntry(BubblewrapEnvironment):
    """Commands entered as before: a host Python per command, the spec on its command line, output in host files."""

    async def _run(self, argv, *, cwd, env, timeout_sec, user, stdin=None, stdout=None):
        if not self.is_alive:
            return ExecResult(stdout="", stderr="the sandbox is not running", return_code=125)
        account = self._user(user if user is not None else self._plan.user)
        variables = {**self._plan.env, "HOME": account.home, "USER": account.name, **(env or {})}
        seccomp_read, seccomp_write = os.pipe()
        os.write(seccomp_write, self._seccomp)
        os.close(seccomp_write)
        full = enter_argv(self._namespaces, seccomp_read, Target(account.uid, account.gid, cwd, variables), argv)
        with tempfile.TemporaryDirectory(dir=self._scratch) as io:
            out_path, err_path = stdout or Path(io) / "stdout", Path(io) / "stderr"
            with open(out_path, "wb") as out, open(err_path, "wb") as err, open(stdin or os.devnull, "rb") as inp:
                process = await asyncio.create_subprocess_exec(
                    *full,
                    stdin=inp,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    pass_fds=(*self._namespaces.values(), seccomp_read),
                )
                os.close(seccomp_read)
                try:
                    code = await asyncio.wait_for(process.wait(), timeout=timeout_sec)
                except asyncio.TimeoutError:
                    process.kill()  # the host side only: the command keeps running in the sandbox
                    await process.wait()
                    raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
            return ExecResult(
                stdout=None if stdout else out_path.read_text(errors="replace"),
                stderr=err_path.read_text(errors="replace"),
                return_code=code,
            )
