"""The amdgpu kernel module (state, DKMS version), the kernel's command line, and the KFD compute interface's
topology."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, found, safe, unknown


class DriverFacts(TypedDict):
    amdgpu_initstate: Fact[str]
    amdgpu_version: Fact[str]
    kfd_topology: Fact[int]  # number of KFD nodes (CPU + GPU)
    kernel_cmdline: Fact[tuple[str, ...]]  # /proc/cmdline's parameters; a pasted line may be cut: only presence counts
    gtt_mib: Fact[int]  # the GTT pool amdgpu set up at boot (MiB), from its kernel-log line


def build(snap: Mapping[str, Any]) -> DriverFacts:
    initstate = snapshot.file(snap, "/sys/module/amdgpu/initstate")
    return DriverFacts(
        amdgpu_initstate=Fact(initstate.status, (initstate.value or "").strip() or None, initstate.source, initstate.error),
        amdgpu_version=snapshot.file(snap, "/sys/module/amdgpu/version"),
        kfd_topology=safe("/sys/class/kfd", lambda: _kfd_topology(snap)),
        kernel_cmdline=safe("/proc/cmdline", lambda: _cmdline(snap)),
        gtt_mib=safe("dmesg", lambda: _gtt(snap)),
    )


# amdgpu's boot line `amdgpu 0000:bd:00.0:  63968M of GTT memory ready.` (amdgpu_ttm.c): the GTT pool, system memory
# the GPU may map. On an APU that is most of what HIP can allocate beyond the BIOS carve-out.
_GTT_LINE = re.compile(r"\b(\d+)M of GTT memory ready\b")


def _gtt(snap: Mapping[str, Any]) -> Fact[int]:
    c = snapshot.command(snap, "dmesg")
    if not c.found or c.value is None:
        return Fact(c.status, None, c.source, c.error)
    sizes = [int(m.group(1)) for m in _GTT_LINE.finditer(c.value.stdout)]
    return found(max(sizes), "dmesg") if sizes else unknown("dmesg ('… of GTT memory ready')")


def _cmdline(snap: Mapping[str, Any]) -> Fact[tuple[str, ...]]:
    f = snapshot.file(snap, "/proc/cmdline")
    if not f.found or not f.value:
        return Fact(f.status, None, f.source, f.error)
    return found(tuple(f.value.split()), f.source)


# Parameters that keep amdgpu from driving the GPU (kernel-parameters.txt: nomodeset makes KMS drivers such as amdgpu
# refuse to load; modprobe.blacklist= and module_blacklist= name modules never to load; amdgpu.modeset=0 disables it).
def blocking_params(params: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for p in params:
        name, _, value = p.partition("=")
        if p == "nomodeset" or (name == "amdgpu.modeset" and value == "0") or (
                name in ("modprobe.blacklist", "module_blacklist") and "amdgpu" in value.split(",")):
            out.append(p)
    return tuple(out)


def misspelled_amdgpu(params: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(parameter, the amdgpu spelling it was meant as) for parameters whose module name is misspelled
    (`aamdgpu.cwsr_enable=0`, `amdgpu_cwsr_enable=0` -> `amdgpu.cwsr_enable=0`): the kernel hands an unknown `x.y=`
    to no module, so the setting silently does nothing."""
    out = []
    for p in params:
        name, eq, value = p.partition("=")
        mod, dot, rest = name.partition(".")
        if dot and mod != "amdgpu" and _one_edit(mod, "amdgpu"):
            out.append((p, f"amdgpu.{rest}{eq}{value}"))
        elif not dot and eq and re.match(r"^amdgpu_\w+$", name):
            out.append((p, f"amdgpu.{name.removeprefix('amdgpu_')}{eq}{value}"))
    return tuple(out)


def _one_edit(a: str, b: str) -> bool:
    """a and b differ by one inserted, deleted or replaced character."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _kfd_topology(snap: Mapping[str, Any]) -> Fact[int]:
    files = snap.get("files")
    if not isinstance(files, dict):
        return unknown("/sys/class/kfd")
    nodes = {p.split("/")[7] for p in files if re.match(r"^/sys/class/kfd/kfd/topology/nodes/\d+/", p)}
    if nodes:
        return found(len(nodes), "/sys/class/kfd/kfd/topology/nodes")
    sp = snapshot.file(snap, "/sys/class/kfd/kfd/topology/system_properties")
    if sp.status is Status.ABSENT or snapshot.path(snap, "/sys/class/kfd").status is Status.ABSENT:
        return absent("/sys/class/kfd")
    return unknown("/sys/class/kfd")
