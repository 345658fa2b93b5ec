"""Redaction for output that leaves the machine: user and host names, home paths, serials and UUIDs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# GPU/CPU UUIDs (rocminfo 'Uuid: GPU-8af705259683161c'), RFC 4122 UUIDs, and serial-number fields.
_PATTERNS = [
    (re.compile(r"\b(GPU|CPU)-[0-9A-Fa-f]{8,}\b"), r"\1-<redacted>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"(?im)^(\s*unique_id\s+)\d+"), r"\g<1><redacted>"),
    (re.compile(r'(?i)("?(?:serial(?:_number)?|asic_serial|uuid)"?\s*[:=]\s*"?)([^",\s}]+)'), r"\g<1><redacted>"),
    (re.compile(r"/home/[^/\s\"':]+"), "/home/<user>"),
]


class Redactor:
    def __init__(self, snapshot: Mapping[str, Any] | None = None, enabled: bool = True):
        self.enabled = enabled
        self.words: list[tuple[str, str]] = []
        snap = snapshot or {}
        user: dict[str, Any] = snap.get("user") if isinstance(snap.get("user"), dict) else {}  # type: ignore[assignment]
        system: dict[str, Any] = snap.get("system") if isinstance(snap.get("system"), dict) else {}  # type: ignore[assignment]
        name = str(user.get("name") or "")
        host = str(system.get("hostname") or "")
        # Whole words only, and never tiny or common names that would shred unrelated text.
        if host and len(host) >= 3:
            self.words.append((host, "<host>"))
        if name and len(name) >= 3 and name not in ("root", "user", "render", "video"):
            self.words.append((name, "<user>"))

    def text(self, s: str) -> str:
        if not self.enabled or not s:
            return s
        for pat, rep in _PATTERNS:
            s = pat.sub(rep, s)
        for word, rep in self.words:
            s = re.sub(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", rep, s)
        return s

    def obj(self, o: Any) -> Any:
        if not self.enabled:
            return o
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, dict):
            return {self.text(k) if isinstance(k, str) else k: self.obj(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [self.obj(v) for v in o]
        return o
