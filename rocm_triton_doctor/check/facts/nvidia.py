"""The NVIDIA side: driver version and GPUs, from nvidia-smi and /proc/driver/nvidia/version."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, found, safe, unknown


@dataclass
class NvidiaGpu:
    name: str
    driver_version: str
    memory: str = ""
    compute_cap: str = ""
    bus_id: str = ""


@dataclass(frozen=True)
class NvidiaInfo:
    driver_version: str | None
    gpus: tuple[NvidiaGpu, ...]


def parse_nvidia_smi_csv(text: str) -> list[NvidiaGpu]:
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2 or not parts[0] or not re.match(r"^\d", parts[1]):
            continue
        parts += [""] * (5 - len(parts))
        out.append(NvidiaGpu(parts[0], parts[1], parts[2], parts[3], parts[4]))
    return out


def parse_nvidia_proc_version(text: str) -> str | None:
    """/proc/driver/nvidia/version: 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  ...'."""
    m = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


class NvidiaFacts(TypedDict):
    nvidia: Fact[NvidiaInfo]


def build(snap: Mapping[str, Any]) -> NvidiaFacts:
    return NvidiaFacts(nvidia=safe("nvidia", lambda: _nvidia(snap)))


def _nvidia(snap: Mapping[str, Any]) -> Fact[NvidiaInfo]:
    smi = snapshot.command(snap, "nvidia-smi")
    proc = snapshot.file(snap, "/proc/driver/nvidia/version")
    driver = parse_nvidia_proc_version(proc.value or "") if proc.found else None
    gpus: tuple[NvidiaGpu, ...] = ()
    if smi.found and smi.value is not None and not smi.value.timed_out:
        gpus = tuple(parse_nvidia_smi_csv(smi.value.stdout))
        if gpus and not driver:
            driver = gpus[0].driver_version
    if driver or gpus:
        return found(NvidiaInfo(driver, gpus), "nvidia-smi, /proc/driver/nvidia/version")
    if proc.status is Status.ABSENT and smi.status in (Status.ABSENT, Status.UNKNOWN, Status.FOUND):
        return absent("/proc/driver/nvidia/version")
    if smi.status is Status.ABSENT:
        return absent("nvidia-smi")
    return unknown("nvidia-smi")
