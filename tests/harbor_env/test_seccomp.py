"""The seccomp filter (``orharbor.harbor_env.seccomp``): Docker's default profile in our sandboxes.

The attack it stops: kernel keyrings are not namespaced, and a level-2 solve.py
stored the hidden instances in a kernel key that a later trial read back. Docker's
default profile refuses ``add_key``/``keyctl``/``request_key`` (and mounts, new
namespaces, bpf, io_uring, module loading...), so the filter must too: these tests
start real bubblewrap sandboxes, install the filter both ways (``bwrap --seccomp``
on one-shot sandboxes and PID 1, the environment's own entry for ``exec``), and probe syscalls from inside with
ctypes. Each refusal is checked against an unfiltered run of the same probe, so it
is the filter that refuses, not a missing capability.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy
import pyseccomp
import pytest

from orharbor.harbor_env import seccomp

# ---------------------------------------------------------------------- the sandboxes

BWRAP = "/usr/bin/bwrap"
BASE = sys.base_prefix
PYTHON = f"{BASE}/bin/python{sys.version_info.major}.{sys.version_info.minor}"
SITE = "/opt/orharbor-site"  # numpy, bound read-only from this machine
NOBODY = 65534


def _sandbox_args() -> list[str]:
    """A Docker-like sandbox: host /usr and /etc read-only, this Python and numpy, fresh /proc, /dev, /tmp."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    for folder in (*reversed(Path(BASE).parents[:-1]), *reversed(Path(SITE, "x").parents[:-1])):
        args += ["--perms", "0755", "--dir", str(folder)]
    args += ["--ro-bind", BASE, BASE]
    packages = Path(numpy.__file__).parent.parent
    for name in ("numpy", "numpy.libs"):
        if (packages / name).is_dir():
            args += ["--ro-bind", str(packages / name), f"{SITE}/{name}"]
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "PYTHONPATH",
        SITE,
    ]
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # set on processors where OpenBLAS needs them
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    return args


def _run_bwrap(command: list[str], *, filtered: bool) -> subprocess.CompletedProcess[str]:
    """``command`` in a one-shot sandbox, under the filter (``bwrap --seccomp``) or not."""
    if not filtered:
        return subprocess.run([BWRAP, *_sandbox_args(), *command], capture_output=True, text=True, timeout=120)
    read, write = os.pipe()
    os.write(write, seccomp.compile_bpf())  # a few KiB: fits the pipe's buffer
    os.close(write)
    try:
        return subprocess.run(
            [BWRAP, *_sandbox_args(), "--seccomp", str(read), *command],
            capture_output=True,
            text=True,
            timeout=120,
            pass_fds=(read,),
        )
    finally:
        os.close(read)


def _entered(tmp_path_factory, commands: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Each of ``commands`` ({name: (user, argv as a shell line)}) run with ``exec`` in one real environment.

    Mutations patch ``orharbor.harbor_env.environment.compile_bpf`` first.
    """
    from sandboxes import environment, run, running

    env = environment(tmp_path_factory.mktemp("seccomp"))

    async def body() -> dict[str, Any]:
        async with running(env):
            return {name: await env.exec(line, user=user, timeout_sec=120) for name, (user, line) in commands.items()}

    return run(body())


def _line(argv: list[str]) -> str:
    return shlex.join(argv)


def _allow_all() -> bytes:
    """The mutation: a filter that allows every syscall."""
    allow = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    with tempfile.TemporaryFile() as out:
        allow.export_bpf(out)
        out.seek(0)
        return out.read()


# ---------------------------------------------------------------------- probes

#: Runs inside the sandbox: each probe in a forked child, so one that succeeds (a new user
#: namespace, a traced process) cannot change the next. Prints {label: 0 or errno}.
PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def arg(value):
    return ctypes.c_char_p(value.encode()) if isinstance(value, str) else ctypes.c_ulong(value % 2**64)
answers = {}
for label, number, args in json.loads(sys.argv[1]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        me = os.getpid()
        result = libc.syscall(ctypes.c_long(number), *map(arg, args))
        code = ctypes.get_errno() if result == -1 else 0
        if os.getpid() != me:  # the child of a clone that worked
            os._exit(0)
        os.write(write, str(code).encode())
        os._exit(0)
    os.close(write)
    answers[label] = int(os.read(read, 64))
    os.close(read)
    os.waitpid(pid, 0)
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
answers["Seccomp"] = int(status["Seccomp"])
answers["uid"] = os.getuid()
print(json.dumps(answers))
"""

KEY_SPEC_PROCESS_KEYRING = -2
KEYCTL_GET_KEYRING_ID = 0
AF_VSOCK, AF_ALG = 40, 38
SIGCHLD = 17
ADDR_NO_RANDOMIZE = 0x0040000
MISSING = "/orharbor-no-such-path"

#: (label, syscall, arguments, Docker's answer). Arguments are harmless: unfiltered, each call
#: fails with another errno or succeeds in a throwaway child.
BLOCKED: list[tuple[str, str, list[int | str], int]] = [
    ("add_key", "add_key", ["user", "orharbor-probe", "secret", 6, KEY_SPEC_PROCESS_KEYRING], errno.EPERM),
    ("keyctl", "keyctl", [KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1], errno.EPERM),
    ("request_key", "request_key", ["user", "orharbor-no-such-key", 0, 0], errno.EPERM),
    ("mount", "mount", ["none", MISSING, "tmpfs", 0, 0], errno.EPERM),
    ("umount2", "umount2", [MISSING, 0], errno.EPERM),
    ("unshare(CLONE_NEWUSER)", "unshare", [os.CLONE_NEWUSER], errno.EPERM),
    ("setns", "setns", [-1, 0], errno.EPERM),
    ("bpf", "bpf", [0xFFFF, 0, 0], errno.EPERM),
    ("userfaultfd", "userfaultfd", [0], errno.EPERM),
    ("perf_event_open", "perf_event_open", [0, 0, -1, -1, 0], errno.EPERM),
    ("kexec_load", "kexec_load", [0, 1000, 0, 0], errno.EPERM),
    ("init_module", "init_module", [0, 0, ""], errno.EPERM),
    ("open_by_handle_at", "open_by_handle_at", [-1, 0, 0], errno.EPERM),
    ("pivot_root", "pivot_root", [MISSING, MISSING], errno.EPERM),
    ("swapon", "swapon", [MISSING, 0], errno.EPERM),
    ("reboot", "reboot", [0, 0, 0, 0], errno.EPERM),  # bad magic: unfiltered it is EINVAL, never a reboot
    ("io_uring_setup", "io_uring_setup", [1, 0], errno.EPERM),
    ("personality(ADDR_NO_RANDOMIZE)", "personality", [ADDR_NO_RANDOMIZE], errno.EPERM),
    ("socket(AF_VSOCK)", "socket", [AF_VSOCK, socket.SOCK_STREAM, 0], errno.EPERM),
    ("socket(AF_ALG)", "socket", [AF_ALG, socket.SOCK_SEQPACKET, 0], errno.EPERM),
    ("clone(CLONE_NEWUSER)", "clone", [os.CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0], errno.EPERM),
    ("clone3", "clone3", [0, 0], errno.ENOSYS),
]
#: Refused unfiltered too on some hosts (modules or kexec compiled out or disabled), so no control.
HOST_DEPENDENT = {"kexec_load", "init_module"}

ALLOWED: list[tuple[str, str, list[int | str]]] = [
    ("personality(query)", "personality", [0xFFFFFFFF]),
    ("socket(AF_INET)", "socket", [socket.AF_INET, socket.SOCK_STREAM, 0]),
    ("socket(AF_UNIX)", "socket", [socket.AF_UNIX, socket.SOCK_STREAM, 0]),
    ("socket(AF_NETLINK)", "socket", [socket.AF_NETLINK, socket.SOCK_RAW, 0]),
    ("clone(fork)", "clone", [SIGCHLD, 0, 0, 0, 0]),
    ("ptrace(PTRACE_TRACEME)", "ptrace", [0, 0, 0, 0]),
    ("chroot", "chroot", ["/"]),
]


def _probe_argv(probes: list[tuple[str, str, list[int | str]]]) -> list[str]:
    numbers = [(label, pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name), args) for label, name, args in probes]
    return [PYTHON, "-I", "-c", PROBE, json.dumps(numbers)]


def _answers(result) -> dict[str, int]:
    """The JSON a probe printed, from a subprocess or from an environment's ``exec``."""
    code = result.returncode if isinstance(result, subprocess.CompletedProcess) else result.return_code
    assert code == 0, result.stderr
    return json.loads(result.stdout)


ALL_PROBES = [(label, name, args) for label, name, args, _ in BLOCKED] + ALLOWED


@pytest.fixture(scope="module")
def filtered() -> dict[str, int]:
    """Every probe's answer in a sandbox under ``bwrap --seccomp``."""
    return _answers(_run_bwrap(_probe_argv(ALL_PROBES), filtered=True))


@pytest.fixture(scope="module")
def unfiltered() -> dict[str, int]:
    """Every probe's answer in the same sandbox without the filter (bwrap as root keeps its capabilities)."""
    return _answers(_run_bwrap(_probe_argv(ALL_PROBES), filtered=False))


ENV_PYTHON = "/usr/local/bin/python3"  # the image's interpreter in the environment


def _env_probe_line(probes) -> str:
    return _line([ENV_PYTHON, *_probe_argv(probes)[1:]])


@pytest.fixture(scope="module")
def entered(tmp_path_factory) -> dict[str, Any]:
    """What commands entered with ``exec`` in the real environment see: probes as root, the attack, workloads."""
    return _entered(
        tmp_path_factory,
        {
            "probes": ("root", _env_probe_line(ALL_PROBES)),
            "probes_agent": ("agent", _env_probe_line(ALL_PROBES)),
            "keyring": ("root", _line([ENV_PYTHON, *_keyring_argv()[1:]])),
            "workload": ("agent", _line(["/opt/orharbor-solver/bin/python", "-c", WORKLOAD])),
            "shell": ("root", _line(["bash", "-c", SHELL_SCRIPT])),
        },
    )


@pytest.fixture(scope="module")
def launched(entered) -> dict[str, int]:
    """Every probe's answer in a command entered with ``exec`` as root (Docker's 14 capabilities)."""
    return _answers(entered["probes"])


# ---------------------------------------------------------------------- the attack, both ways

KEYRING = r"""
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, KEYCTL = int(__import__("sys").argv[1]), int(__import__("sys").argv[2])
serial = libc.syscall(ctypes.c_long(ADD_KEY), b"user", b"orharbor-hidden", b"instance-42", ctypes.c_size_t(11),
                      ctypes.c_long(-2))
answer = {"add_errno": ctypes.get_errno() if serial == -1 else 0}
if serial > 0:
    buffer = ctypes.create_string_buffer(64)
    size = libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(11), ctypes.c_long(serial), buffer, ctypes.c_size_t(64))
    answer["read"] = buffer.raw[:size].decode()
print(json.dumps(answer))
"""


def _keyring_argv() -> list[str]:
    number = lambda name: str(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name))  # noqa: E731
    return [PYTHON, "-I", "-c", KEYRING, number("add_key"), number("keyctl")]


@pytest.mark.sandbox
def test_without_the_filter_a_key_is_stored_and_read_back() -> None:
    """Mutation check: unfiltered, a sandboxed process stores a kernel key and reads it back (the attack works)."""
    assert _answers(_run_bwrap(_keyring_argv(), filtered=False)) == {"add_errno": 0, "read": "instance-42"}


@pytest.mark.sandbox
def test_under_bwrap_filter_the_key_cannot_be_stored() -> None:
    """Under ``bwrap --seccomp`` add_key answers EPERM, so there is no key to read back."""
    assert _answers(_run_bwrap(_keyring_argv(), filtered=True)) == {"add_errno": errno.EPERM}


@pytest.mark.sandbox
def test_a_command_entered_in_the_environment_cannot_store_a_key(entered) -> None:
    """Commands entered with ``exec`` (no children of the filtered PID 1) get EPERM from add_key too."""
    assert _answers(entered["keyring"]) == {"add_errno": errno.EPERM}


@pytest.mark.sandbox
def test_without_the_profile_an_entered_command_stores_and_reads_a_key(tmp_path_factory, monkeypatch) -> None:
    """Mutation: the environment entering commands under an allow-all filter lets the attack store its key."""
    from orharbor.harbor_env import environment as module

    monkeypatch.setattr(module, "compile_bpf", _allow_all)
    result = _entered(tmp_path_factory, {"keyring": ("root", _line([ENV_PYTHON, *_keyring_argv()[1:]]))})
    assert _answers(result["keyring"]) == {"add_errno": 0, "read": "instance-42"}


# ---------------------------------------------------------------------- syscalls refused and allowed


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("label", "expected"), [(label, code) for label, _, _, code in BLOCKED], ids=[label for label, *_ in BLOCKED]
)
def test_bwrap_filter_refuses_with_dockers_errno(filtered: dict[str, int], label: str, expected: int) -> None:
    """Under ``bwrap --seccomp`` each call Docker refuses answers Docker's errno (EPERM, ENOSYS for clone3)."""
    assert filtered["Seccomp"] == 2
    assert errno.errorcode.get(filtered[label]) == errno.errorcode[expected]


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("label", "expected"), [(label, code) for label, _, _, code in BLOCKED], ids=[label for label, *_ in BLOCKED]
)
def test_entered_commands_are_refused_with_dockers_errno(launched: dict[str, int], label: str, expected: int) -> None:
    """In a command entered with ``exec`` as root, each call Docker refuses answers Docker's errno."""
    assert launched["Seccomp"] == 2
    assert errno.errorcode.get(launched[label]) == errno.errorcode[expected]


@pytest.mark.sandbox
@pytest.mark.parametrize("label", [label for label, *_ in BLOCKED if label not in HOST_DEPENDENT])
def test_unfiltered_the_same_call_answers_otherwise(
    unfiltered: dict[str, int], filtered: dict[str, int], label: str
) -> None:
    """Mutation check: without the filter the probe does not get the filtered answer, so the filter is what refuses."""
    assert unfiltered["Seccomp"] == 0
    assert unfiltered[label] != filtered[label], errno.errorcode.get(unfiltered[label])


@pytest.mark.sandbox
@pytest.mark.parametrize("label", [label for label, *_ in ALLOWED])
def test_filter_allows_what_docker_allows(filtered: dict[str, int], launched: dict[str, int], label: str) -> None:
    """personality(0xffffffff), AF_INET/AF_UNIX/AF_NETLINK sockets, plain clone, ptrace and chroot work both ways."""
    assert (filtered[label], launched[label]) == (0, 0), (
        errno.errorcode.get(filtered[label]),
        errno.errorcode.get(launched[label]),
    )


# ---------------------------------------------------------------------- ordinary programs

WORKLOAD = r"""
import json, multiprocessing, os, socket, subprocess, threading
import numpy
done = {}
thread = threading.Thread(target=done.__setitem__, args=("thread", True))
thread.start(); thread.join()
pid = os.fork()
if pid == 0:
    os.execv("/usr/bin/true", ["true"])
done["fork_exec"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
done["subprocess"] = subprocess.run(["sh", "-c", "echo hi"], capture_output=True, text=True).stdout
with multiprocessing.get_context("fork").Pool(2) as pool:
    done["fork_pool"] = pool.map(abs, [-1, -2, -3])
with multiprocessing.get_context("spawn").Pool(2) as pool:
    done["spawn_pool"] = pool.map(abs, [-4, -5])
done["numpy"] = float(numpy.linalg.solve(numpy.array([[2.0, 0.0], [0.0, 4.0]]), numpy.array([2.0, 4.0])).sum())
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.bind(("127.0.0.1", 0)); server.listen(1)
client = socket.create_connection(server.getsockname())
peer, _ = server.accept(); client.sendall(b"ping")
done["inet"] = peer.recv(4).decode()
left, right = socket.socketpair(socket.AF_UNIX)
left.sendall(b"pong"); done["unix"] = right.recv(4).decode()
print(json.dumps(done))
"""
WORKLOAD_DONE = {
    "thread": True,
    "fork_exec": 0,
    "subprocess": "hi\n",
    "fork_pool": [1, 2, 3],
    "spawn_pool": [4, 5],
    "numpy": 2.0,
    "inet": "ping",
    "unix": "pong",
}


@pytest.mark.sandbox
def test_python_workload_runs_under_bwrap_filter() -> None:
    """Threads, fork/exec, subprocess, fork and spawn pools, numpy, inet and unix sockets work under bwrap's filter."""
    assert _answers(_run_bwrap([PYTHON, "-c", WORKLOAD], filtered=True)) == WORKLOAD_DONE


SHELL_SCRIPT = (
    "set -euo pipefail; echo hello | tr a-z A-Z; mkdir -p /tmp/t/d && echo x > /tmp/t/d/f && "
    "tar -c -f /tmp/t.tar -C /tmp/t d && tar -x -f /tmp/t.tar -C /tmp && cat /tmp/d/f && "
    "ls / | grep -c usr; set +o pipefail; yes | head -n 1"
)


@pytest.mark.sandbox
def test_python_workload_runs_entered_as_the_agent(entered) -> None:
    """The same workload works in a command entered as the agent, as Harbor runs the agent."""
    assert _answers(entered["workload"]) == WORKLOAD_DONE


@pytest.mark.sandbox
def test_the_agent_is_filtered_too(entered) -> None:
    """The agent's commands carry the filter (Seccomp: 2) and get EPERM from keyctl."""
    answers = _answers(entered["probes_agent"])
    assert (answers["uid"], answers["Seccomp"], answers["keyctl"]) == (1000, 2, errno.EPERM)


@pytest.mark.sandbox
def test_shell_coreutils_and_tar_run_entered(entered) -> None:
    """bash, coreutils in a pipe, tar both ways and a SIGPIPE'd ``yes`` behave as in Docker, with nothing on stderr."""
    result = entered["shell"]
    assert (result.return_code, result.stdout, result.stderr or "") == (0, "HELLO\nx\n1\ny\n", "")


# ---------------------------------------------------------------------- the data

#: Docker's default capability set (moby's oci/caps defaults), which the profile's groups were evaluated for.
DOCKER_CAPABILITIES = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_RAW",
    "CAP_SYS_CHROOT",
    "CAP_MKNOD",
    "CAP_AUDIT_WRITE",
    "CAP_SETFCAP",
}


def _groups() -> list[dict[str, Any]]:
    return seccomp.load_profile()["groups"]


def _allowed(arch: str = "x86_64", kernel: tuple[int, int] = (6, 18)) -> dict[str, list[seccomp.Rule]]:
    found: dict[str, list[seccomp.Rule]] = {}
    for rule in seccomp.rules(arch, kernel):
        if rule.action == "allow":
            found.setdefault(rule.syscall, []).append(rule)
    return found


def test_every_group_has_a_reason() -> None:
    """Each group has a unique name, an action, a one-line reason and a sorted list of distinct syscalls."""
    names = [group["name"] for group in _groups()]
    assert len(names) == len(set(names))
    for group in _groups():
        assert group["action"] in ("allow", "deny"), group["name"]
        assert group["reason"].strip() and "\n" not in group["reason"], group["name"]
        assert group["syscalls"] and group["syscalls"] == sorted(set(group["syscalls"])), group["name"]


def test_no_syscall_is_both_allowed_and_denied() -> None:
    """No syscall sits in an allow group and a deny group: the data never contradicts itself."""
    allowed = {s for group in _groups() if group["action"] == "allow" for s in group["syscalls"]}
    denied = {s for group in _groups() if group["action"] == "deny" for s in group["syscalls"]}
    assert allowed & denied == set()


@pytest.mark.parametrize("arch", ["x86_64", "x86", "x32", "aarch64", "arm"])
def test_every_syscall_libseccomp_knows_is_accounted_for(arch: str) -> None:
    """Every syscall of the compiled architectures is allowed by a group or refused by one with a reason."""
    token = getattr(pyseccomp.Arch, arch.upper())
    base = 0x40000000 if arch == "x32" else 0x0F0000 if arch == "arm" else 0
    known = set()
    for offset in range(1024):
        for number in {offset, base + offset}:
            try:
                known.add(pyseccomp.resolve_syscall(token, number).decode())
            except ValueError:
                pass
    named = {s for group in _groups() for s in group["syscalls"]}
    assert known - named == set()


def test_capabilities_are_dockers_default_set() -> None:
    """The groups were evaluated for Docker's 14 default capabilities, no more, no fewer."""
    assert set(seccomp.load_profile()["capabilities"]) == DOCKER_CAPABILITIES


def test_capability_gates_follow_the_default_set() -> None:
    """Groups Docker gates on a capability are allowed when the container has it and denied when it lacks it."""
    caps = set(seccomp.load_profile()["capabilities"])
    for group in _groups():
        gate = set(group.get("docker_allows_with", ()))
        if gate:
            assert bool(gate & caps) == (group["action"] == "allow"), group["name"]


# Facts pinned from Docker's profile (moby/profiles/seccomp v0.2.3, default.json and default_linux.go).
@pytest.mark.parametrize(
    "syscall",
    [
        "keyctl",
        "add_key",
        "request_key",
        "mount",
        "umount2",
        "unshare",
        "setns",
        "bpf",
        "perf_event_open",
        "io_uring_setup",
        "kexec_load",
        "init_module",
        "open_by_handle_at",
        "pivot_root",
        "swapon",
        "reboot",
        "userfaultfd",
        "clock_settime",
        "kcmp",
        "mbind",
        "clone3",
    ],
)
def test_docker_refuses(syscall: str) -> None:
    """Docker's default profile allows none of these to a default container."""
    assert syscall not in _allowed()


@pytest.mark.parametrize(
    "syscall",
    [
        "read",
        "write",
        "openat",
        "execve",
        "fork",
        "chroot",
        "socketpair",
        "setresuid",
        "capset",
        "prctl",
        "seccomp",
        "arch_prctl",
        "name_to_handle_at",
    ],
)
def test_docker_allows_outright(syscall: str) -> None:
    """Docker allows these with no argument condition."""
    assert [rule.args for rule in _allowed()[syscall]] == [()]


def test_ptrace_needs_kernel_4_8() -> None:
    """Docker allows ptrace and process_vm_* from kernel 4.8 on only (before that ptrace could slip past seccomp)."""
    for syscall in ("ptrace", "process_vm_readv", "process_vm_writev"):
        assert syscall in _allowed(kernel=(4, 8)) and syscall not in _allowed(kernel=(4, 7))


def test_clone_is_allowed_without_namespace_flags_only() -> None:
    """clone is allowed only when ``flags & (every CLONE_NEW* but NEWTIME) == 0``; s390 tests the second argument."""
    mask = (
        os.CLONE_NEWNS
        | os.CLONE_NEWUTS
        | os.CLONE_NEWIPC
        | os.CLONE_NEWUSER
        | os.CLONE_NEWPID
        | os.CLONE_NEWNET
        | os.CLONE_NEWCGROUP
    )
    assert mask == 0x7E020000
    assert [rule.args for rule in _allowed()["clone"]] == [(seccomp.Comparison(0, "masked_eq", 0, mask),)]
    assert [rule.args for rule in _allowed("s390x")["clone"]] == [(seccomp.Comparison(1, "masked_eq", 0, mask),)]


def test_clone3_answers_enosys() -> None:
    """clone3 hides its flags in memory, so Docker answers ENOSYS and glibc falls back to clone."""
    [rule] = [rule for rule in seccomp.rules("x86_64", (6, 18)) if rule.syscall == "clone3"]
    assert (rule.action, rule.errno, rule.args) == ("errno", errno.ENOSYS, ())


def _holds(comparison: seccomp.Comparison, value: int) -> bool:
    if comparison.op == "masked_eq":
        return value & (comparison.mask or 0) == comparison.value
    return {
        "lt": value < comparison.value,
        "eq": value == comparison.value,
        "gt": value > comparison.value,
        "ne": value != comparison.value,
    }[comparison.op]


def test_socket_refuses_exactly_af_alg_and_af_vsock() -> None:
    """Of address families 0 to 63, socket refuses only AF_ALG (38) and AF_VSOCK (40)."""
    assert (socket.AF_ALG, socket.AF_VSOCK) == (AF_ALG, AF_VSOCK)
    rules = _allowed()["socket"]
    refused = [family for family in range(64) if not any(all(_holds(c, family) for c in r.args) for r in rules)]
    assert refused == [AF_ALG, AF_VSOCK]


def test_personality_allows_five_values() -> None:
    """personality takes PER_LINUX, PER_LINUX32, UNAME26, both, and the 0xffffffff query; nothing else."""
    values = sorted(rule.args[0].value for rule in _allowed()["personality"])
    assert values == [0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF]


def test_profile_counts_stated_in_the_module() -> None:
    """For x86_64 the profile allows 367 names outright and 3 under conditions (9 rules), as the module says."""
    allowed = _allowed()
    outright = {s for s, rules in allowed.items() if rules == [r for r in rules if not r.args]}
    assert (len(outright), len(allowed) - len(outright)) == (367, 3)
    assert sum(len(rules) for s, rules in allowed.items() if s not in outright) == 9
    assert f"{len(outright)} outright" in (seccomp.__doc__ or "")


# ---------------------------------------------------------------------- the compiler

AUDIT_ARCH = {"x86_64": 0xC000003E, "x86": 0x40000003, "aarch64": 0xC00000B7, "arm": 0x40000028}


def _instructions(program: bytes) -> list[tuple[int, int, int, int]]:
    return list(struct.iter_unpack("=HBBI", program))


@pytest.mark.parametrize(("arch", "compat"), [("x86_64", "x86"), ("aarch64", "arm")])
def test_compiles_for_native_and_compat_arches(arch: str, compat: str) -> None:
    """x86_64 and aarch64 compile to whole programs the kernel takes, each testing for its arch and its compat arch."""
    program = seccomp.compile_bpf(arch)
    assert len(program) % 8 == 0 and 0 < len(program) // 8 <= seccomp.MAX_INSTRUCTIONS
    constants = {k for _, _, _, k in _instructions(program)}
    assert {AUDIT_ARCH[arch], AUDIT_ARCH[compat]} <= constants
    assert seccomp.filter_arches(arch)[:2] == [arch, compat]


def test_native_compile_is_cached() -> None:
    """compile_bpf builds once per process: the native program is the same object each time."""
    assert seccomp.compile_bpf() is seccomp.compile_bpf(seccomp.native_arch())


def test_unknown_architecture_is_refused_by_name() -> None:
    """An architecture the profile or libseccomp does not cover is refused, naming the ones that work."""
    with pytest.raises(ValueError, match=r"'sparc64'.*x86_64, aarch64"):
        seccomp.compile_bpf("sparc64")


def test_unknown_syscall_names_are_skipped() -> None:
    """A syscall name this libseccomp does not know is left out (the default errno answers it), as runc does."""
    profile = json.loads(json.dumps(seccomp.load_profile()))
    profile["groups"].append({"name": "future", "action": "allow", "reason": "test", "syscalls": ["no_such_call"]})
    assert seccomp.build_bpf(profile, "x86_64", (6, 18)) == seccomp.build_bpf(seccomp.load_profile(), "x86_64", (6, 18))
