"""Entering a running sandbox the way ``docker exec`` enters a container, through one door per sandbox.

Docker's default: ``runc exec`` joins the container's namespaces, applies the
container's seccomp filter, capability set and user, and only then executes
anything from the container's file system; the command's spec reaches runc
through a file of the runtime's own (``process.json``), never a command line,
and its stdout and stderr stream back through pipes. Executing a program of
the sandbox (its ``bash``, its ``/lib64`` loader, anything reached through a
symlink root in the sandbox may have replaced) while still privileged would
hand those privileges to whatever the sandbox planted there.

So every sandbox has one **door**: a host Python (``python3 -I -S``, host paths
only, built-in and small standard modules only) started once, when the sandbox's PID 1 has
exec'd, that runs :data:`DOOR`:

1. it joins the sandbox's user namespace first, then its mount, UTS, IPC,
   network and PID namespaces, through file descriptors opened when the
   sandbox started (never ``/proc/<pid>`` again, so a recycled process id can
   never lead into another sandbox); it stays a host process, in the host's
   PID namespace, so nothing in the sandbox can see or signal it;
2. for each command, the host sends the spec (user, working directory,
   environment, argv) as one message on a socket, with the command's stdin,
   stdout and stderr as descriptors: nothing of it is on any command line,
   and its output goes into pipes the host drains;
3. the door forks; the child is a member of the sandbox's PID namespace. It
   starts a session of its own, joins a fresh session keyring (never the
   host's, as runc does), changes to the working directory, installs the
   seccomp filter (:mod:`orharbor.harbor_env.seccomp`), shrinks the
   capability bounding set to the target's (root: Docker's 14 defaults;
   other users: none), sets groups, gid and uid, and only then ``execve``\\ s
   the command, resolved in the sandbox's ``PATH``. Until then it is host
   root's process in the sandbox's user namespace, which no sandbox user may
   trace or read (and from ``setresuid`` on it is not dumpable);
4. the door answers with the exit status. Each command joins the sandbox's
   cgroups (:mod:`.cgroups`) as it starts; the door stays outside them, so a
   sandbox at its memory or process limit can still be entered; asked to (a timeout, or the host
   gone), it kills the command's process group, which is what a collect hook
   and its children are.

One fork of a running interpreter replaces starting a host Python per
command. If any step fails the command does not run (exit 126, one line on
stderr). Every sandbox starts a door, so it imports no more than it needs:
the host's messages are :mod:`marshal` data (built in; the host is the only
writer of the door's socket) and its socket calls are ``_socket``'s, which
spares ``json`` (and with it ``re``) and ``socket`` (``enum``, ``selectors``):
two thirds of what the door's start cost.
"""

from __future__ import annotations

import json
import marshal
import os
import socket
import subprocess
import sys
from dataclasses import dataclass

#: The namespaces a command joins, in the order it joins them (the user namespace first: it grants the rest).
NAMESPACES = ("user", "mnt", "uts", "ipc", "net", "pid")
#: Linux capability numbers of Docker's default set (include/uapi/linux/capability.h).
CAPABILITY_NUMBERS = {
    "chown": 0,
    "dac_override": 1,
    "fowner": 3,
    "fsetid": 4,
    "kill": 5,
    "setgid": 6,
    "setuid": 7,
    "setpcap": 8,
    "net_bind_service": 10,
    "net_raw": 13,
    "sys_chroot": 18,
    "mknod": 27,
    "audit_write": 29,
    "setfcap": 31,
}
#: keyctl(2)'s number: each command joins a fresh session keyring, never the host's (runc does the same).
KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219}
#: Exit status when the sandbox could not be entered (the command never ran).
ENTER_FAILED = 126
#: The largest spec a command may have (its environment and argv): execve's own limit is about 2 MiB.
SPEC_LIMIT = 4 * 1024 * 1024
#: How long the door may take to join the sandbox before it counts as failed.
DOOR_START_TIMEOUT_S = 30.0

DOOR = r'''
import _socket, ctypes, marshal, os, select, signal, sys  # every module before setns: the host's library is gone after

def recv_fds(sock, size, most):
    """A message and the descriptors passed with it (socket.recv_fds, without importing socket)."""
    message, ancillary, _, _ = sock.recvmsg(size, _socket.CMSG_LEN(most * 4))
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i:i + 4], sys.byteorder, signed=True) for i in range(0, len(data) - 3, 4)]
    return message, fds

def json_text(text):
    """``text`` as a JSON string (printable characters; quotes and backslashes blanked), for the host to read."""
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else " " for c in text) + '"'

control = _socket.socket(fileno=int(sys.argv[1]))
message, received = recv_fds(control, 1 << 20, 64)  # started early; the sandbox's descriptors come here
if not message:
    sys.exit(0)
setup = marshal.loads(message)
setup["cgroups"] = received[len(setup["namespaces"]):]
flags = {"user": os.CLONE_NEWUSER, "mnt": os.CLONE_NEWNS, "uts": os.CLONE_NEWUTS, "ipc": os.CLONE_NEWIPC,
         "net": os.CLONE_NEWNET, "pid": os.CLONE_NEWPID}
for name, fd in zip(setup["namespaces"], received):
    try:
        os.setns(fd, flags[name])
    except OSError as exc:
        reason = json_text("cannot join the sandbox's " + name + " namespace: " + str(exc))
        control.send(('{"error": ' + reason + '}').encode())
        sys.exit(1)
    os.close(fd)
program = setup["seccomp"]
libc = ctypes.CDLL(None, use_errno=True)
last_cap = int(open("/proc/sys/kernel/cap_last_cap").read())
class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
filter_buffer = ctypes.create_string_buffer(program, len(program))
filter_prog = SockFprog(len(program) // 8, ctypes.cast(filter_buffer, ctypes.c_void_p))
control.send(b'{"ready": true}')

def enter(spec, stdio):
    """The child: everything a command needs, in order, then execve; never returns."""
    def fail(what, exc):
        os.write(2, f"orharbor-enter: {what}: {exc}\n".encode())
        os._exit(126)
    def errno_error():
        return OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    for fd in setup["cgroups"]:  # "0": this process, into the sandbox's cgroups before it runs anything
        try:
            os.write(fd, b"0")
        except OSError as exc:
            fail("cannot join the sandbox's cgroup", exc)
    try:
        os.setsid()
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.closerange(3, 1 << 20)
    except OSError as exc:
        fail("cannot set up the command's descriptors", exc)
    if libc.syscall(setup["keyctl"], 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a fresh anonymous one, as runc does
        fail("cannot join a fresh session keyring", errno_error())
    try:
        os.chdir(spec["cwd"])
    except OSError as exc:
        fail(f"cannot change to {spec['cwd']}", exc)
    if len(program) % 8 or not program or libc.prctl(22, 2, ctypes.byref(filter_prog), 0, 0) != 0:
        fail("cannot install the seccomp filter", errno_error())  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    keep = set(spec["capabilities"])
    for cap in range(last_cap + 1):
        if cap not in keep and libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            fail(f"cannot drop capability {cap}", errno_error())
    try:
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])
    except OSError as exc:
        fail(f"cannot become uid {spec['uid']}", exc)
    for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores both, and exec would pass that on
        signal.signal(number, signal.SIG_DFL)
    argv, env = spec["argv"], spec["env"]
    paths = [argv[0]] if "/" in argv[0] else [d.rstrip("/") + "/" + argv[0]
                                              for d in env.get("PATH", "/usr/bin:/bin").split(":") if d]
    error = FileNotFoundError(2, "command not found")
    for path in paths:
        try:
            os.execve(path, argv, env)
        except OSError as exc:
            if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                error = exc
    os.write(2, f"{argv[0]}: {error.strerror}\n".encode())
    os._exit(127 if isinstance(error, FileNotFoundError) else 126)

running = {}  # reply socket's fd -> {"reply", "child", "pidfd", "killed"}
def finish(entry, code):
    try:
        entry["reply"].send(b'{"exit": %d}' % code)
    except OSError:
        pass
    entry["reply"].close()
    if entry["pidfd"] is not None:
        os.close(entry["pidfd"])

while True:
    watched = [control, *(e["reply"] for e in running.values() if not e["killed"]),
               *(e["pidfd"] for e in running.values())]
    ready, _, _ = select.select(watched, [], [])
    if control in ready:
        message, fds = recv_fds(control, setup["spec_limit"], 4)
        if not message:
            break  # the host is gone; the sandbox's end ends every command
        reply, stdio = _socket.socket(fileno=fds[0]), fds[1:]
        spec = marshal.loads(message)
        try:
            child = os.fork()
        except OSError as exc:
            os.write(stdio[2], f"orharbor-enter: cannot start the command in the sandbox: {exc}\n".encode())
            child = None
        if child == 0:
            enter(spec, stdio)
        for fd in stdio:
            os.close(fd)
        if child is None:
            finish({"reply": reply, "pidfd": None}, 126)
            continue
        running[reply.fileno()] = {"reply": reply, "child": child, "pidfd": os.pidfd_open(child), "killed": False}
    for key, entry in list(running.items()):
        if entry["reply"] in ready:  # asked to end the command, or the host stopped waiting: once is enough
            entry["killed"] = True
            for kill in (os.kill, os.killpg):  # the child itself, even before its setsid, then its group
                try:
                    kill(entry["child"], signal.SIGKILL)
                except OSError:
                    pass
        if entry["pidfd"] in ready:
            _, status = os.waitpid(entry["child"], 0)
            code = os.waitstatus_to_exitcode(status)
            del running[key]
            finish(entry, code if code >= 0 else 128 - code)
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


class Door:
    """The host side of a sandbox's door: start it once, then :meth:`submit` each command."""

    def __init__(
        self,
        namespace_fds: dict[str, int] | None = None,
        seccomp: bytes = b"",
        python: str | None = None,
        cgroup_procs: tuple[int, ...] = (),
    ) -> None:
        """Start the door's process; with ``namespace_fds``, also :meth:`join` the sandbox at once.

        Started before the sandbox is (its interpreter starts while bubblewrap
        builds the root), it waits for :meth:`join` to hand it the sandbox's
        descriptors.
        """
        self.joined = False
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for sock in (self.control, theirs):
            _large_buffers(sock)
        try:
            self.process = subprocess.Popen(
                [python or host_python(), "-I", "-S", "-c", DOOR, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                env={},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except BaseException:
            self.control.close()
            raise
        finally:
            theirs.close()
        if namespace_fds is not None:
            self.join(namespace_fds, seccomp, cgroup_procs)

    def join(self, namespace_fds: dict[str, int], seccomp: bytes, cgroup_procs: tuple[int, ...] = ()) -> None:
        """Hand the door the sandbox and wait until it has joined it (RuntimeError with its reason if not).

        ``cgroup_procs`` are open ``cgroup.procs`` files of the sandbox's
        cgroups: each command joins them before it runs anything, while the
        door itself stays outside, so the sandbox's limits never end it. The
        door gets copies of the descriptors; the caller keeps its own.
        """
        names = [name for name in NAMESPACES if name in namespace_fds]
        try:
            setup = {
                "namespaces": names,
                "seccomp": bytes(seccomp),
                "keyctl": KEYCTL_SYSCALL[os.uname().machine],
                "spec_limit": SPEC_LIMIT,
            }
            socket.send_fds(
                self.control, [marshal.dumps(setup)], [*(namespace_fds[name] for name in names), *cgroup_procs]
            )
            self.control.settimeout(DOOR_START_TIMEOUT_S)
            try:
                answer = self.control.recv(65536)
            except TimeoutError:
                answer = b""
            self.control.settimeout(None)
            state = json.loads(answer) if answer else {}
            if not state.get("ready"):
                self.close()
                raise RuntimeError(state.get("error") or f"the sandbox's door did not open: {self._stderr()}")
        except BaseException:
            self.close()
            raise
        self.joined = True

    def submit(self, target: Target, argv: list[str], stdin: int, stdout: int, stderr: int) -> socket.socket:
        """Start ``argv`` as ``target``; the returned socket answers ``{"exit": code}`` once it has ended.

        Sending anything on that socket, or closing it, kills the command's
        process group. The caller keeps (and closes) its own copies of the
        three descriptors.
        """
        if not self.joined:
            raise RuntimeError("the door has not joined a sandbox")
        spec = marshal.dumps(
            {
                "argv": argv,
                "env": target.env,
                "cwd": target.cwd,
                "uid": target.uid,
                "gid": target.gid,
                "capabilities": target.capabilities,
            }
        )
        if len(spec) > SPEC_LIMIT:
            raise ValueError(
                f"the command's environment and arguments take {len(spec)} bytes, "
                f"more than the {SPEC_LIMIT} a command may have"
            )
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self.control, [spec], [theirs.fileno(), stdin, stdout, stderr])
        except OSError:
            mine.close()
            raise
        finally:
            theirs.close()
        return mine

    def close(self) -> None:
        """End the door (the commands it started are ended by the sandbox's end, not by this)."""
        self.joined = False
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        self.control.close()

    def _stderr(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        _, err = self.process.communicate()
        return (err or b"").decode(errors="replace").strip() or "it exited"


def _large_buffers(sock: socket.socket) -> None:
    """Room for one :data:`SPEC_LIMIT` message (SO_SNDBUFFORCE as root, else as much as the host allows)."""
    for option in (getattr(socket, "SO_SNDBUFFORCE", 32), socket.SO_SNDBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, 2 * SPEC_LIMIT)
            return
        except OSError:
            continue


def host_python() -> str:
    """The host interpreter that runs :data:`DOOR` (the one running orharbor: trusted, outside any sandbox)."""
    return os.path.realpath(sys.executable)
