"""Error text the user already has: pasted tracebacks and logs (`errors`), the runtime probe's error, tool stderr.

Each piece keeps its verbatim text and the ids of the knowledge/data/errors.json signatures it matches; checks go from
a signature to the facts that decide its cause (checks/errors.py). The helpers here serve every check that reads error
text: the matching line quoted as evidence, and which pieces say a build lacks the GPU's code. A snapshot without any
error text has this fact UNKNOWN: "no error pasted" never means "no error happens".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.facts.base import Fact, found, safe, unknown
from rocm_triton_doctor.knowledge import errors as known


@dataclass(frozen=True)
class ErrorText:
    text: str
    origin: str  # "text" (pasted), "runtime probe", "<command> stderr"
    signatures: tuple[str, ...]


class ErrorFacts(TypedDict):
    errors: Fact[tuple[ErrorText, ...]]


def build(snap: Mapping[str, Any]) -> ErrorFacts:
    return ErrorFacts(errors=safe("errors", lambda: _errors(snap)))


def _entry(text: str, origin: str) -> ErrorText:
    return ErrorText(text, origin, tuple(s.id for s in known.match(text)))


def _errors(snap: Mapping[str, Any]) -> Fact[tuple[ErrorText, ...]]:
    out: list[ErrorText] = []
    for e in snap.get("errors") or () if isinstance(snap.get("errors"), list) else ():
        if isinstance(e, dict) and isinstance(e.get("text"), str):
            out.append(_entry(e["text"], str(e.get("from") or "text")))
        elif isinstance(e, str):
            out.append(_entry(e, "text"))
    rt = snap.get("runtime")
    if isinstance(rt, dict):
        for key in ("error", "triton_error", "stderr_tail"):
            if isinstance(rt.get(key), str) and rt[key]:
                out.append(_entry(rt[key], "runtime probe"))
    py = snap.get("python")
    if isinstance(py, dict) and isinstance(py.get("pip_errors"), list):
        out.extend(_entry(str(t), "pip") for t in py["pip_errors"] if t)
    cmds = snap.get("commands")
    for name, c in (cmds.items() if isinstance(cmds, dict) else ()):
        if isinstance(c, dict) and isinstance(c.get("stderr"), str) and known.match(c["stderr"]):
            out.append(_entry(c["stderr"], f"{name} stderr"))
    if not out:
        return unknown("errors")
    return found(tuple(out), "error text")


def with_signature(errors: Fact[tuple[ErrorText, ...]], *ids: str) -> tuple[ErrorText, ...]:
    """The pieces of error text that match any of the signatures `ids`."""
    return tuple(e for e in errors.value or () if set(e.signatures) & set(ids)) if errors.found else ()


def supported_targets(text: str) -> tuple[str, ...] | None:
    """The gfx list a program says it was built for, as its own error says it: ollama's `is not supported by
    /tmp/…/rocm [gfx1030 gfx1100 …]` / `(supported types:[gfx1010 …])`, tensorflow-rocm's `The supported AMDGPU
    versions are gfx1030, gfx900, …`. None when the text names no such list."""
    found_any: list[str] = []
    for line in text.splitlines():
        low = line.lower()
        idx = low.rfind("supported")
        if idx < 0:
            continue
        tail = line[idx + len("supported"):]
        # Only the list itself: `[gfx… gfx…]`, or the comma/space-separated run right after "are"/":" (the rest of
        # an ollama line names the GPU's own gfx: `gpu_type=gfx1031`).
        m = re.search(r"\[([^\]]*)\]", tail) or re.search(r"((?:gfx[0-9a-f]{3,4}[\s,]*){2,})", tail, flags=re.I)
        names = [knowledge.base_gfx(g) for g in re.findall(r"\bgfx[0-9a-f]{3,4}\b", m.group(1) if m else "", flags=re.I)]
        if len(names) >= 2:
            found_any.extend(n for n in names if n not in found_any)
    return tuple(found_any) or None


def quote(errs: tuple[ErrorText, ...]) -> tuple[str, ...]:
    """The matching error lines, verbatim (first line of each piece that matched), as evidence."""
    out = []
    for e in errs[:3]:
        for sig in e.signatures:
            s = known.by_id(sig)
            m = s.search(e.text) if s else None
            if m:
                start = e.text.rfind("\n", 0, m.start()) + 1
                end = e.text.find("\n", m.end())
                out.append(f"{e.origin}: {e.text[start:end if end >= 0 else None].strip()[:240]}")
                break
    return tuple(out)


# -- "no code object for this GPU" -----------------------------------------------------------------------------------

CODE_OBJECT = ("hip-no-binary-for-gpu", "invalid-device-function", "no-compatible-code-objects",
               "ollama-gfx-not-supported", "tensorflow-ignoring-gpu", "hsa-invalid-isa", "app-no-supported-gpu")

_TORCH_PROCESS = re.compile(r"site-packages/torch/|import torch|\btorch\.cuda\b|File \".*torch/", re.I)


def _rocblas_lacks_target(e: ErrorText) -> bool:
    """A rocBLAS "no Tensile library" error that proves the rocBLAS the program loaded has no kernels for the GPU:
    the library is torch's own (site-packages/torch/lib/rocblas), or no torch is in sight and the message names the
    GPU's arch (a program's own ROCm: ollama, llama.cpp). A system /opt/rocm rocBLAS inside a torch process can be a
    library mix instead (known-error says so)."""
    if "rocblas-tensile-missing" not in e.signatures:
        return False
    if re.search(r"/torch/lib/rocblas/", e.text):
        return True
    # the message names the GPU's arch, or (cut above it) its list of the Tensile libraries it does have
    named = re.search(r"for GPU arch\s*:\s*gfx|/rocblas/library/TensileLibrary(?:_lazy)?_gfx\w+\.dat", e.text)
    return bool(named) and not _TORCH_PROCESS.search(e.text)


def code_object_errors(errors: Fact[tuple[ErrorText, ...]]) -> tuple[ErrorText, ...]:
    """The error texts that say the running build has no code for the GPU (CODE_OBJECT signatures, and rocBLAS's
    missing Tensile library where it proves the same)."""
    return tuple(e for e in errors.value or () if errors.found
                 and (set(e.signatures) & set(CODE_OBJECT) or _rocblas_lacks_target(e)))


def named_isas(errs: tuple[ErrorText, ...]) -> set[str]:
    """The gfx targets a code-object error says it looked for (`for ISA: amdgcn-amd-amdhsa--gfx1101`, `found for:
    gfx1152`), as base targets."""
    out: set[str] = set()
    for e in errs:
        for m in re.finditer(r"(?:amdgcn-amd-amdhsa--|ISA:\s*|found for:\s*)(gfx[0-9a-f]{3,4})\b", e.text, re.I):
            out.add(knowledge.base_gfx(m.group(1).lower()))
    return out
