"""Fix safety (issue #10 item 6): every fix command must follow from facts that were FOUND, never from unknowns.

`violations(facts, finding)` names each rule a finding's fix commands break:
* an index for the wrong platform: the CPU index unless the machine is known CPU-only; a CUDA index, or PyPI's
  default torch (no --index-url), on an AMD machine; a ROCm index on a known NVIDIA/CPU machine;
* an HSA_OVERRIDE_GFX_VERSION value that is not a same-ISA-family stand-in for a GPU whose gfx is known, or that
  overrides a target the installed build already carries;
* `usermod` for a device node known to be root-only (0600) unless the same fix first changes its mode (udev rule);
* an index / override / device selection when the hardware is unknown;
* a bare `pip` when the snapshot names the interpreter (`<python> -m pip` installs into the environment checked).

The tests run every fix of every scenario fixture and every corpus capture through it.
"""

from __future__ import annotations

import re

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.facts import Facts, Gpu
from rocm_triton_doctor.check.facts.platform import accelerator, amd_host
from rocm_triton_doctor.check.facts.python import torch_index_url, torch_version
from rocm_triton_doctor.check.findings import Finding

_OVERRIDE = re.compile(r"HSA_OVERRIDE_GFX_VERSION(?:_\d+)?=\"?(?P<v>\d+\.\d+\.\d+)")
_INDEX = re.compile(r"--index-url\s+(?P<url>\S+)")


def _torch_install(cmd: str) -> bool:
    return bool(re.search(r"\bpip3?\b.*\binstall\b.*\btorch(?:==\S+)?(?:\s|$)", cmd))


def violations(f: Facts, finding: Finding) -> list[str]:
    if finding.fix is None:
        return []
    out: list[str] = []
    plat = accelerator(f)
    gpus = [g for g in (f.gpus.value or ()) if g.gfx] if f.gpus.found else []
    cmds = finding.fix.commands
    text_indexes = f.python.value.pip_indexes if f.python.found and f.python.value else ()
    exe = f.python.value.executable if f.python.found and f.python.value else ""
    for cmd in cmds:
        for m in _INDEX.finditer(cmd):
            url = m.group("url")
            if "/whl/cpu" in url and plat != "cpu":
                out.append(f"CPU index on a machine not known to be CPU-only ({plat}): {cmd}")
            if re.search(r"/whl/(?:nightly/)?cu\d", url) and plat != "nvidia":
                out.append(f"CUDA index on a machine not known to be NVIDIA ({plat}): {cmd}")
            rocm_url = "rocm" in url or "radeon" in url
            if rocm_url and plat in ("nvidia", "cpu"):
                out.append(f"ROCm index on a {plat} machine: {cmd}")
            own = torch_index_url(torch_version(f) or "")  # the index the installed torch came from
            if rocm_url and plat == "unknown" and url not in text_indexes and url != own and not (f.rocm.found and f.rocm.value):
                out.append(f"ROCm index while the hardware is unknown: {cmd}")
        if _torch_install(cmd) and not _INDEX.search(cmd) and amd_host(f):
            out.append(f"PyPI's default (CUDA) torch on an AMD machine: {cmd}")
        if exe and re.match(r"^\s*(?:sudo\s+)?pip3?\s", cmd):
            out.append(f"bare pip although the interpreter is known ({exe}): {cmd}")
        for m in _OVERRIDE.finditer(cmd):
            out.extend(_override_violations(f, gpus, m.group("v"), cmd))
        if "usermod" in cmd and not any("udev" in c for c in cmds):
            nodes = ((f.dev_kfd.value,) if f.dev_kfd.found else ()) + tuple(f.render_nodes.value or ())
            for node in nodes:
                if node is not None and node.mode is not None and not node.group_rw and not node.world_rw:
                    out.append(f"usermod offered for root-only {node.path} ({node.perms}): {cmd}")
        if re.search(r"(?:ROCR|HIP|CUDA)_VISIBLE_DEVICES=\d", cmd) and not gpus and not f.env.found:
            out.append(f"device selection while neither the GPUs nor the environment are known: {cmd}")
    return out


def _override_violations(f: Facts, gpus: list[Gpu], value: str, cmd: str) -> list[str]:
    target, _why = knowledge.parse_override(value)
    mine = {v.strip().strip("\"'").strip() for k, v in (f.env.value or {}).items() if k.startswith("HSA_OVERRIDE_GFX_VERSION")}
    if not gpus and value in mine:
        return []  # the user's own value, only its spelling fixed (quotes, blanks): no new choice about the GPU
    if not gpus:
        return [f"override while no GPU's gfx is known: {cmd}"]
    from rocm_triton_doctor.check.checks.gpus import torch_arch_list

    arches, _src = torch_arch_list(f)
    fits = []
    for g in gpus:
        if not g.gfx:
            continue
        same_family = target == g.gfx or any(r.target == target for r in knowledge.override_rules(g.gfx))
        fits.append(same_family and not (arches and g.gfx in arches and target != g.gfx))
    return [] if any(fits) else [f"override {value} fits no GPU here ({', '.join(g.gfx or '?' for g in gpus)}): {cmd}"]
