"""The amdgpu kernel module (state, DKMS version) and the KFD compute interface's topology."""

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


def build(snap: Mapping[str, Any]) -> DriverFacts:
    initstate = snapshot.file(snap, "/sys/module/amdgpu/initstate")
    return DriverFacts(
        amdgpu_initstate=Fact(initstate.status, (initstate.value or "").strip() or None, initstate.source, initstate.error),
        amdgpu_version=snapshot.file(snap, "/sys/module/amdgpu/version"),
        kfd_topology=safe("/sys/class/kfd", lambda: _kfd_topology(snap)),
    )


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
