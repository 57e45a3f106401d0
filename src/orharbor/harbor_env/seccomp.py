"""The sandbox's seccomp filter: Docker's default profile, as data and a compiler.

Docker default it mirrors: moby's default seccomp profile, read at moby/moby
b985e2313a8676e18072b442911fc8f64f17d440 (``vendor/github.com/moby/profiles/seccomp``,
module v0.2.3, the newest; ``profiles/seccomp/default.json`` at moby/moby
00f3d189e420d485e42d15fe494f96d272284e0e, on the 24.0 branch, still allows io_uring
and AF_ALG), applied as Docker applies it to a container with its 14 default
capabilities. Evaluated rule by rule, our groups equal Docker's for x86_64,
aarch64, s390x, riscv64 and mips64, and compile to the same BPF bytes.
The number it enforces: for x86_64 on kernel >= 4.8, 370 syscall names allowed,
367 outright and 3 under argument conditions (socket outside AF_ALG and
AF_VSOCK, 5 personality values, clone without CLONE_NEW* flags); clone3
answers ENOSYS; everything else EPERM. With libseccomp 2.5.4 that is 301 of
the 368 x86_64 syscalls it knows allowed and 67 refused, each refused one
named, with the reason, in a deny group of ``seccomp_default.json``.

``seccomp_default.json`` holds the facts in our own layout (groups with a
reason each); :func:`compile_bpf` turns it into the raw BPF program
(``struct sock_filter[]``) with libseccomp, for the native architecture plus
the compat ones Docker adds (x86_64: x86 and x32; aarch64: arm). It reaches a
process two ways: bubblewrap installs it on PID 1 and on one-shot sandboxes
(``bwrap --seccomp FD``), and :mod:`orharbor.harbor_env.enter` installs it with
``prctl(PR_SET_SECCOMP)`` on every command entered later, which is no
descendant of PID 1, while it still holds CAP_SYS_ADMIN (so, as with runc, no
no_new_privs is needed).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import platform
import re
import tempfile
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import pyseccomp

#: The kernel refuses longer programs (BPF_MAXINSNS).
MAX_INSTRUCTIONS = 4096

#: Our architecture names (the kernel's ``uname -m``) to libseccomp's tokens; loongarch64,
#: which Docker also lists, is unknown to this libseccomp.
_ARCHES = {
    "x86_64": pyseccomp.Arch.X86_64,
    "x86": pyseccomp.Arch.X86,
    "x32": pyseccomp.Arch.X32,
    "aarch64": pyseccomp.Arch.AARCH64,
    "arm": pyseccomp.Arch.ARM,
    "mips": pyseccomp.Arch.MIPS,
    "mips64": pyseccomp.Arch.MIPS64,
    "mips64n32": pyseccomp.Arch.MIPS64N32,
    "mipsel": pyseccomp.Arch.MIPSEL,
    "mipsel64": pyseccomp.Arch.MIPSEL64,
    "mipsel64n32": pyseccomp.Arch.MIPSEL64N32,
    "ppc64le": pyseccomp.Arch.PPC64LE,
    "s390": pyseccomp.Arch.S390,
    "s390x": pyseccomp.Arch.S390X,
    "riscv64": pyseccomp.Arch.RISCV64,
}
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}
_OPS = {
    "ne": pyseccomp.NE,
    "lt": pyseccomp.LT,
    "le": pyseccomp.LE,
    "eq": pyseccomp.EQ,
    "ge": pyseccomp.GE,
    "gt": pyseccomp.GT,
    "masked_eq": pyseccomp.MASKED_EQ,
}
_NR_SCMP_ERROR = -1  # what libseccomp answers for a syscall name it does not know


@dataclass(frozen=True)
class Comparison:
    """One argument test: ``args[arg] <op> value``, or ``args[arg] & mask == value`` for ``masked_eq``."""

    arg: int
    op: str
    value: int
    mask: int | None = None


@dataclass(frozen=True)
class Rule:
    """One syscall's action under one set of argument tests (all must hold), and the group it came from."""

    syscall: str
    action: Literal["allow", "errno"]
    errno: int | None
    args: tuple[Comparison, ...]
    group: str


@functools.cache
def load_profile() -> dict[str, Any]:
    """``seccomp_default.json``: the default errno, the architecture map and the groups, each with its reason."""
    text = resources.files("orharbor.harbor_env").joinpath("seccomp_default.json").read_text()
    return json.loads(text)


def native_arch() -> str:
    """This machine's architecture in the profile's names (``x86_64``, ``aarch64``...)."""
    machine = platform.machine()
    return _MACHINE_ALIASES.get(machine, machine)


def kernel_version() -> tuple[int, int]:
    """The running kernel's (major, minor), as Docker compares ``minKernel`` (``6.18.4-x`` is (6, 18))."""
    found = re.match(r"(\d+)\.(\d+)", os.uname().release)
    if found is None:
        raise RuntimeError(f"cannot read a kernel version from {os.uname().release!r}")
    return int(found.group(1)), int(found.group(2))


def rules(
    arch: str | None = None, kernel: tuple[int, int] | None = None, profile: dict[str, Any] | None = None
) -> list[Rule]:
    """The rules Docker would install on ``arch`` (default: native) under ``kernel`` (default: running).

    Groups whose condition fails are left out, as are deny groups without an
    errno of their own: the default action already answers them.
    """
    profile = profile or load_profile()
    target = _check_arch(arch or native_arch(), profile)
    running = kernel or kernel_version()
    default = _errno(profile["default_errno"])
    found: list[Rule] = []
    for group in profile["groups"]:
        if not _applies(group.get("when", {}), target, running):
            continue
        if group["action"] == "allow":
            action: Literal["allow", "errno"] = "allow"
            code = None
        else:
            action, code = "errno", _errno(group.get("errno", profile["default_errno"]))
            if code == default:
                continue
        alternatives = group.get("args_any_of") or [[]]
        for syscall in group["syscalls"]:
            for alternative in alternatives:
                found.append(Rule(syscall, action, code, tuple(Comparison(**c) for c in alternative), group["name"]))
    return found


def filter_arches(arch: str | None = None, profile: dict[str, Any] | None = None) -> list[str]:
    """The architectures a filter for ``arch`` covers: it, then the compat ones Docker adds."""
    profile = profile or load_profile()
    target = _check_arch(arch or native_arch(), profile)
    return [target, *profile["architectures"][target]]


def skipped_syscalls(arch: str | None = None) -> list[str]:
    """Syscalls the profile names that this libseccomp does not know: left out, so they get the default errno."""
    return sorted({rule.syscall for rule in rules(arch) if _number(rule.syscall) == _NR_SCMP_ERROR})


def compile_bpf(arch: str | None = None) -> bytes:
    """The raw BPF program (``struct sock_filter[]``) for ``arch`` (default: native), built once per process."""
    return _compile(_check_arch(arch or native_arch()), kernel_version())


@functools.cache
def _compile(arch: str, kernel: tuple[int, int]) -> bytes:
    return build_bpf(load_profile(), arch, kernel)


def build_bpf(profile: dict[str, Any], arch: str, kernel: tuple[int, int]) -> bytes:
    """The raw BPF program of ``profile`` for ``arch`` under ``kernel``, built now with libseccomp."""
    # A fresh filter holds the native architecture; the target's own list replaces it.
    seccomp_filter = pyseccomp.SyscallFilter(pyseccomp.ERRNO(_errno(profile["default_errno"])))
    wanted = [_ARCHES[name] for name in filter_arches(arch, profile) if name in _ARCHES]
    for token in wanted:
        if not seccomp_filter.exist_arch(token):
            seccomp_filter.add_arch(token)
    native = pyseccomp.system_arch()
    if native not in wanted:
        seccomp_filter.remove_arch(native)
    for rule in rules(arch, kernel, profile):
        number = _number(rule.syscall)
        if number == _NR_SCMP_ERROR:
            continue  # unknown to this libseccomp, as runc skips it: the default errno answers
        action = pyseccomp.ALLOW if rule.action == "allow" else pyseccomp.ERRNO(rule.errno or 0)
        args = [
            pyseccomp.Arg(c.arg, _OPS[c.op], c.mask, c.value)
            if c.op == "masked_eq"
            else pyseccomp.Arg(c.arg, _OPS[c.op], c.value)
            for c in rule.args
        ]
        seccomp_filter.add_rule(action, number, *args)
    with tempfile.TemporaryFile() as out:
        seccomp_filter.export_bpf(out)
        out.seek(0)
        program = out.read()
    if len(program) % 8 or not 0 < len(program) // 8 <= MAX_INSTRUCTIONS:
        raise RuntimeError(
            f"libseccomp built a {len(program)}-byte seccomp program for {arch}; the kernel takes "
            f"1 to {MAX_INSTRUCTIONS} instructions of 8 bytes"
        )
    return program


def _check_arch(arch: str, profile: dict[str, Any] | None = None) -> str:
    architectures = (profile or load_profile())["architectures"]
    if arch not in architectures or arch not in _ARCHES:
        known = ", ".join(a for a in architectures if a in _ARCHES)
        raise ValueError(f"no seccomp filter for architecture {arch!r}: the profile and this libseccomp cover {known}")
    return arch


def _applies(when: dict[str, Any], arch: str, kernel: tuple[int, int]) -> bool:
    """Docker's includes/excludes: arch conditions name the native architecture, not each compat one."""
    if "arches" in when and arch not in when["arches"]:
        return False
    if arch in when.get("not_arches", ()):
        return False
    if "min_kernel" in when:
        major, minor = (int(part) for part in when["min_kernel"].split("."))
        if kernel < (major, minor):
            return False
    return True


def _errno(name: str) -> int:
    code = getattr(errno, name, None)
    if not isinstance(code, int):
        raise ValueError(f"seccomp_default.json names errno {name!r}, which is not an errno name")
    return code


def _number(syscall: str) -> int:
    """The native number libseccomp uses for ``syscall`` (a negative pseudo-number if it exists elsewhere only)."""
    return pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, syscall)


__all__ = [
    "MAX_INSTRUCTIONS",
    "Comparison",
    "Rule",
    "build_bpf",
    "compile_bpf",
    "filter_arches",
    "kernel_version",
    "load_profile",
    "native_arch",
    "rules",
    "skipped_syscalls",
]
