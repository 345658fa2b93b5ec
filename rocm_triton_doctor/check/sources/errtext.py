"""Error text -> `errors`: `[{"text": <verbatim>, "from": "text", "signatures": [ids]}]`.

A segment is error text when a known signature (knowledge/data/errors.json) matches it, or it carries a Python
traceback, a HIP/HSA/MIOpen/rocBLAS error line, a crash line (Aborted, Segmentation fault, panicked). The whole
segment is kept verbatim — the checks and a human need the surrounding lines — with the ids of the signatures it
matches, so a check can go from the message to the facts that decide its cause.
"""

from __future__ import annotations

import re

from rocm_triton_doctor.check.sources._frag import Fragment
from rocm_triton_doctor.knowledge import errors as known

_GENERIC = re.compile(
    r"Traceback \(most recent call last\)|^\w*(Error|Exception): |\bHIP error\b|\bhipError\w+|HSA_STATUS_ERROR_\w+|"
    r"MIOpen(\(HIP\))?:? (Error|Warning)|rocBLAS error|\bAborted\b|Segmentation fault|core dumped|panicked at|"
    r"\b[Aa]ccess violation\b|"
    r"\bERROR:|\berror: |CUDA error|^\s*File \"[^\"]+\", line \d+, in ", re.M)


def detect(text: str) -> bool:
    return bool(known.match(text) or _GENERIC.search(text))


def parse(text: str, cmd: str | None = None) -> Fragment:
    body = text.strip("\n")
    if not body.strip() or not detect(body):
        return {}
    full = f"{cmd}\n{body}" if cmd else body
    entry: dict[str, object] = {"text": full, "from": "text"}
    ids = [s.id for s in known.match(full)]
    if ids:
        entry["signatures"] = ids
    return {"errors": [entry]}
