"""Redaction for output that leaves the machine: secrets, user and host names, home paths, serials and UUIDs.

It applies to whatever a report prints, whatever the snapshot's origin: the live probes record no secret on purpose
(collect.ENV_NAMES), but a loaded or pasted snapshot can hold anything, and `report --snapshot` printed its HF_TOKEN,
AWS_SECRET_ACCESS_KEY and URL passwords (issue #18, defect 8). Secrets are matched three ways:
by NAME (env-style `*_TOKEN`, `*_KEY`, `*_SECRET`, `*PASSWORD*`, ... as a dict key, `NAME=value` or `"NAME": "value"`),
by PLACE (`scheme://user:password@host`, `?token=`, `Authorization: Bearer ...`), and by SHAPE (token formats that
announce themselves: hf_, ghp_/github_pat_, AKIA..., sk-..., xox?-...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SECRET = "<redacted>"

# A variable or key name that holds a secret. Anchored on the name's own words so that e.g. PATH, KEYBOARD or
# HSA_ENABLE_SDMA never match; "_KEY" needs the underscore (AWS_ACCESS_KEY_ID, API_KEY) so "KEY" alone does not.
_SECRET_NAME = (r"[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|_KEY|APIKEY|API_KEY|CREDENTIALS?|_AUTH|"
                r"AUTH_|COOKIE|SESSION_ID)[A-Za-z0-9_]*")
_SECRET_NAME_RE = re.compile(rf"(?i)^{_SECRET_NAME}$")

_PATTERNS = [
    # NAME=value and NAME: value, shell- or env-file style (the value up to whitespace or a quote).
    (re.compile(rf"(?i)\b({_SECRET_NAME})(\s*=\s*)(['\"]?)[^\s'\";&]+"), rf"\1\2\3{SECRET}"),
    # "NAME": "value" in JSON (an env section printed in a report).
    (re.compile(rf"(?i)(\"{_SECRET_NAME}\"\s*:\s*\")[^\"]*(\")"), rf"\1{SECRET}\2"),
    # Credentials in URLs: scheme://user:password@host and scheme://token@host.
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@\"']+:[^/\s@\"']*@"), rf"\1{SECRET}@"),
    (re.compile(r"(?i)\b((?:https?|git\+https?|ftp)://)[^/\s:@\"']{12,}@"), rf"\1{SECRET}@"),
    # Secrets in query strings.
    (re.compile(r"(?i)([?&](?:token|access_token|api_key|apikey|key|secret|password|passwd|sig|signature|auth)=)"
                r"[^&\s\"'#]+"), rf"\1{SECRET}"),
    # Authorization headers.
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{SECRET}"),
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*(?:basic|bearer|token|digest)?\s*)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{SECRET}"),
    # Token shapes: Hugging Face, GitHub, AWS access key ids, OpenAI-style, Slack, GitLab.
    (re.compile(r"\b(?:hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|"
                r"sk-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{16,})\b"), SECRET),
    # GPU/CPU UUIDs (rocminfo 'Uuid: GPU-8af705259683161c'), RFC 4122 UUIDs, and serial-number fields.
    (re.compile(r"\b(GPU|CPU)-[0-9A-Fa-f]{8,}\b"), r"\1-<redacted>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"(?im)^(\s*unique_id\s+)\d+"), r"\g<1><redacted>"),
    (re.compile(r'(?i)("?(?:serial(?:_number)?|asic_serial|uuid)"?\s*[:=]\s*"?)([^",\s}]+)'), r"\g<1><redacted>"),
    (re.compile(r"/home/[^/\s\"':]+"), "/home/<user>"),
    (re.compile(r"/Users/[^/\s\"':]+"), "/Users/<user>"),
]


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME_RE.match(name))


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
        # A home outside /home (a network home, /var/lib/<service>) is known only when the snapshot records HOME;
        # the redacting process's own HOME is not used: the snapshot may come from another machine and user.
        env: dict[str, Any] = snap.get("env") if isinstance(snap.get("env"), dict) else {}  # type: ignore[assignment]
        home = str(env.get("HOME") or "").rstrip("/")
        self.home = home if len(home) >= 5 else ""

    def text(self, s: str) -> str:
        if not self.enabled or not s:
            return s
        if self.home:
            s = re.sub(rf"(?<![\w.-]){re.escape(self.home)}(?=/|\b|$)", "~", s)
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
            return {self.text(k) if isinstance(k, str) else k:
                    (SECRET if isinstance(k, str) and is_secret_name(k) and isinstance(v, str) and v else self.obj(v))
                    for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [self.obj(v) for v in o]
        return o
