"""The code-object audit as a fact: which GPU targets each part of the installed stack carries code for.

From the snapshot's `codeobjects` section (written by check/probes/codeobjects.py; missing = unknown, null = no
torch or ROCm Python packages to audit), plus pasted tool output as evidence: `codeobjects.pasted` is a list of
{"tool": "roc-obj-ls" | "llvm-objdump", "text": ...}, for users who ran the tools by hand
(pytorch/pytorch#132570 asked for exactly `roc-obj-ls libtorch_hip.so | grep gfxNNNN`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.facts.base import Fact, error, found, section
from rocm_triton_doctor.check.probes.codeobjects import target_id

SOURCE = "codeobjects"


@dataclass(frozen=True)
class CodeObjectSet:
    """One library (or one directory of per-target files) and the target ids it carries code objects for."""

    name: str  # "torch/lib/libtorch_hip.so", "torch/lib/rocblas/library"
    kind: str  # hip-fatbin | rocblas | hipblaslt | tensile | miopen | kpack | pasted
    targets: tuple[str, ...]
    complete: bool = True  # False: only part of it was read (time budget, v1 compressed bundle, sampling)
    error: str = ""
    source: str = SOURCE

    @property
    def gfx(self) -> tuple[str, ...]:
        return tuple(sorted({knowledge.base_gfx(t) for t in self.targets}))


@dataclass(frozen=True)
class CodeObjects:
    roots: tuple[str, ...]
    shared_objects: int  # .so files looked at (HIP or not)
    sets: tuple[CodeObjectSet, ...]
    elapsed_s: float | None = None

    @property
    def hip_libraries(self) -> tuple[CodeObjectSet, ...]:
        return tuple(s for s in self.sets if s.kind in ("hip-fatbin", "pasted"))


def _sets(sec: Mapping[str, Any]) -> list[CodeObjectSet]:
    out: list[CodeObjectSet] = []
    for lib in sec.get("libraries") or ():
        complete = not lib.get("partial") and not lib.get("error")
        out.append(CodeObjectSet(str(lib.get("path", "?")), "hip-fatbin", tuple(lib.get("targets") or ()), complete,
                                 str(lib.get("error") or ""), f"{SOURCE}: .hip_fatbin of {lib.get('path', '?')}"))
    for t in sec.get("tensile") or ():
        kind = t.get("lib") if t.get("lib") in ("rocblas", "hipblaslt") else "tensile"
        out.append(CodeObjectSet(str(t.get("dir", "?")), str(kind), tuple(t.get("targets") or ()),
                                 source=f"{SOURCE}: {t.get('files', '?')} Tensile file names in {t.get('dir', '?')}"))
    for m in sec.get("miopen") or ():
        out.append(CodeObjectSet(str(m.get("dir", "?")), "miopen", tuple(m.get("targets") or ()),
                                 source=f"{SOURCE}: {m.get('files', '?')} MIOpen kernel databases in {m.get('dir', '?')}"))
    for k in sec.get("kpack") or ():
        out.append(CodeObjectSet(str(k.get("dir", "?")), "kpack", tuple(k.get("targets") or ()),
                                 source=f"{SOURCE}: {k.get('files', '?')} .kpack file names in {k.get('dir', '?')}"))
    for p in sec.get("pasted") or ():
        parse = parse_roc_obj_ls if "roc-obj" in str(p.get("tool", "")) else parse_objdump_offloading
        for name, targets in parse(str(p.get("text", ""))).items():
            out.append(CodeObjectSet(name, "pasted", targets, source=f"pasted `{p.get('tool', '?')}` output"))
    return out


def codeobjects_fact(snap: Mapping[str, Any]) -> Fact[CodeObjects]:
    sec = section(snap, SOURCE, "codeobjects section is not an object")
    if isinstance(sec, Fact):
        return sec
    if sec.get("error") and not sec.get("libraries"):
        return error(SOURCE, str(sec["error"]))
    value = CodeObjects(tuple(str(r) for r in sec.get("roots") or ()), int(sec.get("shared_objects") or 0),
                        tuple(_sets(sec)), sec.get("elapsed_s"))
    return found(value, SOURCE)


_URI_FILE = re.compile(r"file://([^#\s]+)")


def parse_roc_obj_ls(text: str) -> dict[str, tuple[str, ...]]:
    """`roc-obj-ls FILE` lines: `<n>  hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-  file:///path/lib.so#offset=…&size=…`."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        if "amdgcn-amd-amdhsa" not in line:
            continue
        m = _URI_FILE.search(line)
        name = m.group(1).rsplit("/", 1)[-1] if m else "pasted roc-obj-ls"
        token = next((w for w in line.split() if "amdgcn-amd-amdhsa" in w), "")
        t = target_id(token)
        if t:
            out.setdefault(name, set()).add(t)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def parse_objdump_offloading(text: str) -> dict[str, tuple[str, ...]]:
    """`llvm-objdump --offloading FILE`: the `FILE:\\tfile format …` header names the file; targets come from
    `arch gfxNNN` lines (offload binaries) or from `…amdgcn-amd-amdhsa--gfxNNN` bundle ids (HIP offload bundles)."""
    out: dict[str, set[str]] = {}
    name = "pasted llvm-objdump"
    for line in text.splitlines():
        m = re.match(r"^(\S.*?):\s+file format\s", line)
        if m:
            name = m.group(1).rsplit("/", 1)[-1]
            continue
        a = re.match(r"^\s*arch\s+(gfx\S+)", line)
        tok = a.group(1) if a else next((w for w in re.split(r"[\s,]+", line) if "amdgcn-amd-amdhsa-" in w), "")
        t = target_id(tok) if tok else None
        if t:
            out.setdefault(name, set()).add(t)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def features(target: str) -> dict[str, str]:
    """'gfx90a:sramecc+:xnack-' -> {'sramecc': '+', 'xnack': '-'}."""
    return {f[:-1]: f[-1] for f in target.split(":")[1:] if f[-1:] in "+-"}


def runs_on(code: str, gfx: str, device_features: Mapping[str, str]) -> bool:
    """Whether a code object for target id `code` loads on a device `gfx` with `device_features` (LLVM target-id
    rules, AMDGPUUsage 'Target Features': a feature the code object leaves unspecified runs either way; a specified
    one must equal the device's; a generic target runs on its members)."""
    base = knowledge.base_gfx(code)
    if base != gfx and not (base.endswith("-generic") and gfx in knowledge.generic_members(base)):
        return False
    return all(device_features.get(k, v) == v for k, v in features(code).items())
