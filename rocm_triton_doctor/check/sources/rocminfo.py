"""rocminfo output (full or an excerpt), and the lines it prints before it fails.

The text goes to `commands.rocminfo` unchanged (GPU agent names also to `gpus_seen`, so that excerpts such as
`rocminfo | grep gfx` still name the GPUs): the fact builder parses agents from it exactly as from a probe's
stdout. What rocminfo says about /dev/kfd ("Unable to open /dev/kfd read-write: <strerror>",
rocminfo.cc CheckInitialState) becomes `paths./dev/kfd`: `exists: false` for ENOENT, else `exists: true` plus
`open_error` (the strerror text) — the mode and owner stay unknown.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment, command, gpu_seen, merge

_MARKERS = (
    re.compile(r"^\s*ROCk module (is|is NOT) loaded", re.M),
    re.compile(r"^\s*HSA System Attributes\s*$", re.M),
    re.compile(r"^\s*HSA Agents\s*$", re.M),
    re.compile(r"^\s*Agent \d+\s*$", re.M),
    re.compile(r"^\s*Marketing Name:\s+\S", re.M),
    re.compile(r"^\s*Name:\s+amdgcn-amd-amdhsa--gfx", re.M),
    re.compile(r"hsa api call failure at", re.M),
    re.compile(r"^\s*WSL environment detected\.", re.M),
    re.compile(r"^\s*Compute Unit:\s+\d+", re.M),
    re.compile(r"^\s*Device Type:\s+(GPU|CPU)\s*$", re.M),
    re.compile(r"Unable to open /dev/kfd read-write", re.M),
)
_KFD_OPEN = re.compile(r"Unable to open /dev/kfd read-write:\s*(?P<err>[^\n`]+)")


# `rocminfo | grep gfx` excerpts: agent names alone. clinfo prints the same `Name: gfx…` lines under `Board name:`
# / `Platform Name` headers, so those texts are clinfo's (sources/gpu_names.py), not rocminfo's.
_AGENT_NAME_ONLY = re.compile(r"^\s*Name:\s+gfx[0-9a-f]{3,4}\s*$", re.M)
_CLINFO = re.compile(r"Board name:|Platform Name|Number of devices", re.I)


def detect(text: str) -> bool:
    if any(m.search(text) for m in _MARKERS):
        return True
    return bool(_AGENT_NAME_ONLY.search(text)) and not _CLINFO.search(text)


def parse(text: str) -> Fragment:
    frag: Fragment = command("rocminfo", text)
    # agent names, also from excerpts such as `rocminfo | grep gfx` that lack the Agent headers
    for k, n in enumerate(re.finditer(r"^\s*Name:\s+(gfx[0-9a-f]+)\s*$", text, re.M)):
        merge(frag, gpu_seen("rocminfo", n.group(1), None, index=k))  # k: order among the GPU agents shown
    if re.search(r"^\s*WSL environment detected\.", text, re.M):
        merge(frag, {"system": {"wsl": True}})  # rocminfo's own WSL detection (rocminfo.cc): a WSL machine
    # ROCm's issue form asks for `rocminfo | grep -E "^\s*(Name|Marketing Name)"` under a `GPU:` heading: when those
    # names hold no gfx target, rocminfo enumerated no GPU agent (legacy-rocm-build#4490: only the CPU's names, WSL).
    sect = re.search(r"^GPU:[ \t]*\n((?:[ \t]+(?:Name|Marketing Name):[^\n]*\n?)+)", text, re.M)
    if sect and not re.search(r"Name:\s+gfx[0-9a-f]+", sect.group(1)):
        merge(frag, {"system": {"rocminfo_gpu_agents": 0}})
    m = _KFD_OPEN.search(text)
    if m:
        err = m.group("err").strip()
        if "No such file" in err:
            merge(frag, {"paths": {"/dev/kfd": {"exists": False}}})
        else:
            merge(frag, {"paths": {"/dev/kfd": {"exists": True, "open_error": err}}})
    return frag
