"""KFD topology `properties` dumps (`cat /sys/class/kfd/kfd/topology/nodes/*/properties`) and dmesg/journal lines.

A properties dump is "key value" per line (kfd_topology.c). The node number comes from the path in the command
when the paste shows it; otherwise dumps are numbered in paste order from 0 when the first is the CPU node
(simd_count 0), else from 1 — recorded in `notes` so a reader knows the number was inferred.
Kernel log lines go to `commands.dmesg` verbatim; the checks and error signatures read them there.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment, command, file, merge

_PROP = re.compile(r"^(cpu_cores_count|simd_count|gfx_target_version|vendor_id|device_id|drm_render_minor|"
                   r"simd_per_cu|wave_front_size|mem_banks_count|array_count|location_id|unique_id)\s+\d+\s*$")
# Kernel log lines: dmesg's `[  1.234]`, journalctl's `Jan 28 04:01:12 host kernel:`, `<4>` levels, talosctl's
# `192.168.0.35: kern:    info: [2026-01-06T19:44:20.165448477Z]:` (numbered or not; talos#12544), and amdgpu's own
# `amdgpu 0000:03:00.0: amdgpu: …` / `amdgpu: …` prefix pasted without the timestamp (legacy-rocm-build#3446).
_DMESG = re.compile(r"^(?:\[\s*\d+\.\d+\]|\w{3}\s+\d+\s+\d\d:\d\d:\d\d\s+\S+\s+kernel:|<\d>"
                    r"|(?:\d+:)?\S+:\s+kern:\s+\w+:\s+\[[^\]]+\]:)\s*.*"
                    r"(amdgpu|kfd|drm|radeon|\bamd\b|iommu|hsa|vfio)"
                    r"|^(?:\[drm[:\]][^\n]*)?amdgpu(?: [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)?: ", re.IGNORECASE)


def detect_properties(text: str) -> bool:
    return sum(1 for ln in text.splitlines() if _PROP.match(ln.strip())) >= 3


def detect_dmesg(text: str) -> bool:
    return any(_DMESG.match(ln.strip()) for ln in text.splitlines())


def parse_properties(text: str, cmd: str | None = None, start: int | None = None) -> Fragment:
    """One or more dumps; a new dump starts at each `cpu_cores_count` line (the first key kfd prints)."""
    dumps: list[list[str]] = []
    for ln in text.splitlines():
        s = ln.strip()
        if not re.match(r"^[a-z_]+\s+-?\d+$", s):
            continue
        if s.startswith("cpu_cores_count") or not dumps:
            dumps.append([])
        dumps[-1].append(s)
    m = re.search(r"/sys/(?:class|devices/virtual)/kfd/kfd/topology/nodes/(\d+)/properties", cmd or "")
    frag: Fragment = {}
    for i, lines in enumerate(dumps):
        if m and len(dumps) == 1:
            node = int(m.group(1))
        else:
            first_cpu = re.search(r"^simd_count\s+0$", "\n".join(dumps[0]), re.M) is not None
            node = (0 if first_cpu else 1) + i + (start or 0)
            merge(frag, {"notes": [f"KFD node {node}: number inferred from paste order"]})
        merge(frag, file(f"/sys/class/kfd/kfd/topology/nodes/{node}/properties", "\n".join(lines) + "\n"))
    return frag


def parse_dmesg(text: str, cmd: str | None = None) -> Fragment:
    lines = [ln.rstrip() for ln in text.splitlines() if _DMESG.match(ln.strip())]
    return command("dmesg", "\n".join(lines)) if lines else {}
