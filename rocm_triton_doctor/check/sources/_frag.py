"""Snapshot fragments: what one parser learnt from one piece of pasted text, and how fragments merge.

A fragment is a partial snapshot dict (DESIGN §2 contract). Parsers only ever ADD keys the text shows; a key the
text does not mention stays missing (= unknown to the checks), never null or empty.
"""

from __future__ import annotations

import re
from typing import Any

Fragment = dict[str, Any]

# Sections whose "entry missing" would otherwise read as "probed and absent" (DESIGN §2: inside a present `env`
# an absent variable is NOT set; a distribution missing from `python.distributions` is not installed). A
# text-made snapshot lists them in top-level `partial` unless the text was complete (a full `env` dump, an
# unfiltered `pip list`/`pip freeze`). `user.groups` is only ever filled from `id`/`groups`, which print the
# session's full list.
PARTIAL_KEYS = ("env", "python.distributions")


def merge(into: Fragment, frag: Fragment, _path: tuple[str, ...] = ()) -> Fragment:
    """Deep-merge `frag` into `into` (in place). Dicts merge; lists extend without duplicates; two texts of one
    command or file (two excerpts of the same tool's output) are joined; any other scalar: the first value wins."""
    for key, value in frag.items():
        if key not in into:
            into[key] = _copy(value)
            continue
        cur = into[key]
        if isinstance(cur, dict) and isinstance(value, dict):
            merge(cur, value, (*_path, key))
        elif isinstance(cur, list) and isinstance(value, list):
            cur.extend(_copy(v) for v in value if v not in cur)
        elif (isinstance(cur, str) and isinstance(value, str) and _path in (("commands",), ("files",))
              and value not in cur):
            into[key] = cur.rstrip("\n") + "\n" + value
    return into


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def command(name: str, text: str) -> Fragment:
    """A pasted command output: the contract allows the plain string (docs/snapshot.md)."""
    return {"commands": {name: text}}


def file(path: str, text: str | None) -> Fragment:
    """A file's content; None records a file the text shows is absent ("No such file or directory")."""
    return {"files": {path: text}}


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


_GFX = re.compile(r"\bgfx(\d{2,4}[a-z]?)\b", re.IGNORECASE)


def gfx_names(text: str) -> list[str]:
    """Every gfx target named in `text`, lower-case, in order, without duplicates ('GFX1151' -> 'gfx1151')."""
    out: list[str] = []
    for m in _GFX.finditer(text):
        g = "gfx" + m.group(1).lower()
        if g not in out:
            out.append(g)
    return out


def gpu_seen(tool: str, gfx: str | None = None, name: str | None = None, **extra: Any) -> Fragment:
    entry: dict[str, Any] = {"tool": tool}
    if gfx:
        entry["gfx"] = gfx
    if name:
        entry["name"] = name
    entry.update({k: v for k, v in extra.items() if v is not None})
    return {"gpus_seen": [entry]}


# `[INFO] ` (ComfyUI), and rich's `INFO     ` with an optional `22:09:42-469548 ` time (SD.Next, kohya_ss); a docker
# build's plain progress `#8 10.47 ` or its bare elapsed seconds `10.47 ` (ROCm/flash-attention#37); a timestamp first:
# `[2026-07-14 12:44:44.038] ` or `2026-07-11T14:06:46.577801 - ` (ComfyUI's log file), Python logging's default
# `2025-02-06 11:05:28,056 - INFO - separator - ` (Eddycrack864/UVR5-UI#31)
_LOG_PREFIX = re.compile(r"^(?:\[\d{4}-\d\d-\d\d[ T][\d:.,]+\]\s*|\d{4}-\d\d-\d\d[ T][\d:.,]+\s+-\s+"
                         r"(?:(?:INFO|WARNING|DEBUG|ERROR|CRITICAL)\s+-\s+[\w.]+\s+-\s+)?)?"
                         r"(?:(?:#\d+\s+)?\d+\.\d\d\s+)?(?:\d\d:\d\d:\d\d[-.,]\d+\s+)?"
                         r"(?:\[(?:INFO|WARNING|DEBUG|ERROR)\]\s*|(?:INFO|WARNING|DEBUG|ERROR)\s{2,})?")


# Ray prefixes a worker's output with its actor or task: `(GPUActor pid=3134225) ` (ray#46563), `(pid=12, ip=10.0.0.2) `.
_RAY_PREFIX = re.compile(r"^\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\)\s+")


def log_line(line: str) -> str:
    """A pasted line without surrounding blanks, a Ray worker's prefix and a leading level tag (`[INFO] `, or
    `INFO     ` with its time)."""
    return _LOG_PREFIX.sub("", _RAY_PREFIX.sub("", line.strip()))
