"""Entering a running sandbox the way ``docker exec`` enters a container: privileges dropped before the first exec.

Docker's default: ``runc exec`` joins the container's namespaces, applies the
container's seccomp filter, capability set and user, and only then executes
anything from the container's file system. Executing a program of the
sandbox (its ``bash``, its ``/lib64`` loader, anything reached through a
symlink root in the sandbox may have replaced) while still privileged would
hand those privileges to whatever the sandbox planted there.

So a command enters a sandbox through :data:`PROGRAM`, which the host's own
Python runs (``python3 -I -S``, host paths only, standard library only):

1. join the sandbox's user namespace first, then its mount, UTS, IPC, network
   and PID namespaces, through file descriptors opened when the sandbox
   started (never ``/proc/<pid>`` again, so a recycled process id can never
   lead into another sandbox);
2. fork, so the child is a member of the sandbox's PID namespace; the parent
   waits and passes on the child's exit status;
3. in the child: join a fresh session keyring (never the host's, as runc
   does), change to the working directory, install the seccomp filter
   (:mod:`orharbor.harbor_env.seccomp`), shrink the capability bounding set to
   the target's (root: Docker's 14 defaults; other users: none), set groups,
   gid and uid, and only then ``execvpe`` the command, resolved in the
   sandbox's ``PATH``.

If any step fails the command does not run (exit 126, one line on stderr).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

#: The namespaces a command joins, in the order it joins them (the user namespace first: it grants the rest).
NAMESPACES = ("user", "mnt", "uts", "ipc", "net", "pid")
#: Linux capability numbers of Docker's default set (include/uapi/linux/capability.h).
CAPABILITY_NUMBERS = {"chown": 0, "dac_override": 1, "fowner": 3, "fsetid": 4, "kill": 5, "setgid": 6,
                      "setuid": 7, "setpcap": 8, "net_bind_service": 10, "net_raw": 13, "sys_chroot": 18,
                      "mknod": 27, "audit_write": 29, "setfcap": 31}
#: keyctl(2)'s number: each command joins a fresh session keyring, never the host's (runc does the same).
KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219}
#: Exit status when the sandbox could not be entered (the command never ran).
ENTER_FAILED = 126

PROGRAM = r'''
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
'''


@dataclass(frozen=True)
class Target:
    """Who a command runs as inside the sandbox, and where."""

    uid: int
    gid: int
    cwd: str
    env: dict[str, str]

    @property
    def capabilities(self) -> list[int]:
        """Root keeps Docker's default capabilities; every other user none (setuid programs gain none)."""
        return sorted(CAPABILITY_NUMBERS.values()) if self.uid == 0 else []


def enter_argv(python: str, namespace_fds: dict[str, int], seccomp_fd: int, target: Target,
               argv: list[str]) -> list[str]:
    """The host-side command that runs ``argv`` in the sandbox whose namespaces are ``namespace_fds``.

    The file descriptors must be passed to the process (``pass_fds``);
    ``seccomp_fd`` is read to its end (a fresh pipe or file per command).
    """
    spec = {"namespaces": [(name, namespace_fds[name]) for name in NAMESPACES if name in namespace_fds],
            "seccomp": seccomp_fd,
            "keyctl": KEYCTL_SYSCALL[os.uname().machine], "uid": target.uid, "gid": target.gid, "cwd": target.cwd, "env": target.env,
            "capabilities": target.capabilities}
    return [python, "-I", "-S", "-c", PROGRAM, json.dumps(spec), *argv]


def host_python() -> str:
    """The host interpreter that runs :data:`PROGRAM` (the one running orharbor: trusted, outside any sandbox)."""
    return os.path.realpath(sys.executable)
