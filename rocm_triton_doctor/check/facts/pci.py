"""PCI display devices from /sys/bus/pci: an AMD GPU shows here even when no driver is bound to it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, found, safe, unknown


@dataclass(frozen=True)
class PciDevice:
    address: str
    vendor: int
    device: int
    pci_class: int

    @property
    def is_amd(self) -> bool:
        return self.vendor == 0x1002

    @property
    def is_nvidia(self) -> bool:
        return self.vendor == 0x10DE


class PciFacts(TypedDict):
    pci_display: Fact[tuple[PciDevice, ...]]


def build(snap: Mapping[str, Any]) -> PciFacts:
    return PciFacts(pci_display=safe("/sys/bus/pci/devices", lambda: _pci(snap)))


def _pci(snap: Mapping[str, Any]) -> Fact[tuple[PciDevice, ...]]:
    files = snap.get("files")
    if not isinstance(files, dict):
        return unknown("/sys/bus/pci/devices")
    out = []
    for p in sorted(files):
        m = re.match(r"^/sys/bus/pci/devices/([^/]+)/class$", p)
        if not m or not isinstance(files[p], str):
            continue
        base = p.rsplit("/", 1)[0]
        try:
            vendor = int(str(files.get(base + "/vendor") or "").strip(), 16)
            device = int(str(files.get(base + "/device") or "").strip(), 16)
            cls = int(files[p].strip(), 16)
        except ValueError:
            continue
        out.append(PciDevice(m.group(1), vendor, device, cls))
    if out or snapshot.path(snap, "/sys/bus/pci/devices").found:
        return found(tuple(out), "/sys/bus/pci/devices")
    return unknown("/sys/bus/pci/devices")
