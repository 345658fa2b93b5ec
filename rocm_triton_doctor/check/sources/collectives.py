"""What a paste says about multi-GPU collectives: the RCCL release (`RCCL: 2.27.7` in an environment list, RCCL's own
`NCCL version 2.27.7+hip7.2` banner), a ROCm release stated in an issue form or list (`- **ROCm**: 7.2.1`,
`ROCm version: 7.2.1`), how many GPUs a launch spans (`--tensor-parallel-size 2`, `--nproc-per-node 4`, `-tp 2`) and
a collective reported hanging (`deadlock`, `hangs`, `stuck`). Keys under `system`: `rccl_version`, `stated_rocm`,
`gpus_per_launch` (the largest count shown), `hang_reported` (true only when the text says so).
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment

# `RCCL: 2.27.7`, `- **RCCL**: 2.27.7`, a markdown table's `| RCCL | 2.27.7 (…) |`, RCCL's `NCCL version 2.27.7+hip7.2`
_RCCL = re.compile(r"(?:\bRCCL\**\s*(?:version)?\s*(?:[:=]|\|)\s*\**\s*v?|\bNCCL version\s+)(?P<v>2\.\d+\.\d+)"
                   r"(?:[-+]\S*)?", re.I)
_STATED_ROCM = re.compile(r"^\s*(?:[-*]\s+|\|\s*)?\**ROCm(?:\s+version)?\**\s*(?:[:=]|\|)\s*\**\s*"
                          r"(?P<v>\d+\.\d+(?:\.\d+)?)\b", re.I | re.M)
_PER_LAUNCH = re.compile(r"--tensor[-_]parallel[-_]size[ =](?P<a>\d+)|\btensor_parallel_size\s*=\s*(?P<b>\d+)|"
                         r"(?:^|\s)-tp[ =](?P<c>\d+)\b|--nproc[-_]per[-_]node[ =](?P<d>\d+)|"
                         r"\bTensor Parallel\s*=\s*(?P<e>\d+)|\bTP\s*=\s*(?P<f>\d+)", re.I)
_HANG = re.compile(r"\b(?:dead-?lock(?:s|ed)?|hangs?|hung|stuck)\b", re.I)


def parse(text: str, cmd: str | None = None) -> Fragment:
    sysf: dict[str, object] = {}
    m = _RCCL.search(text)
    if m:
        sysf["rccl_version"] = m.group("v")
    m = _STATED_ROCM.search(text)
    if m:
        sysf["stated_rocm"] = m.group("v")
    counts = [int(v) for mm in _PER_LAUNCH.finditer(f"{cmd or ''}\n{text}") for v in mm.groups() if v]
    if counts:
        sysf["gpus_per_launch"] = max(counts)
    if _HANG.search(text):
        sysf["hang_reported"] = True
    return {"system": sysf} if sysf else {}
