"""Error text the user already has: pasted tracebacks and logs (`errors`), the runtime probe's error, tool stderr.

Each piece keeps its verbatim text and the ids of the knowledge/data/errors.json signatures it matches; checks go from
a signature to the facts that decide its cause (checks/errors.py). A snapshot without any error text has this fact
UNKNOWN: "no error pasted" never means "no error happens".
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
