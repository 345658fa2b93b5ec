"""Known error messages as data (knowledge/data/errors.json): message -> meaning -> the facts that decide between
its possible causes -> the fix, each row with its source. Used on pasted error text, probe stderr and
runtime.error; matching never raises."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Cause:
    cause: str  # a cause class of tests/fixtures/captures/README.md
    confirm: tuple[str, ...]  # the facts that would confirm this cause


@dataclass(frozen=True)
class ErrorSignature:
    id: str
    pattern: re.Pattern[str]
    meaning: str
    causes: tuple[Cause, ...]
    fix: str
    source: str
    example: str = ""  # a verbatim real occurrence, for rows no corpus capture contains
    # "severity": "fail" in the table: the message is itself the failure, with one cause it names (a library the
    # loader cannot find, a crash inside ROCm's code), so known-error reports it as failing, not as a possibility.
    fails: bool = False

    def fix_for(self, text: str) -> str:
        """The fix, with "{N}" replaced by what the pattern's group N matched in `text` (the library a message
        names), where it matched; a placeholder whose group did not match stays as written."""
        m = self.pattern.search(text) if "{1}" in self.fix else None
        fix = self.fix
        for i, g in enumerate(m.groups() if m else (), start=1):
            if g:
                fix = fix.replace(f"{{{i}}}", g)
        return fix

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text)


@cache
def _data() -> dict[str, object]:
    text = resources.files("rocm_triton_doctor.knowledge").joinpath("data").joinpath("errors.json").read_text(encoding="utf-8")
    data: dict[str, object] = json.loads(text)
    return data


def as_of() -> str:
    return str(_data()["as_of"])


@cache
def signatures() -> tuple[ErrorSignature, ...]:
    rows = _data()["signatures"]
    assert isinstance(rows, list)
    return tuple(ErrorSignature(str(r["id"]), re.compile(str(r["pattern"])), str(r["meaning"]),
                                tuple(Cause(str(c["cause"]), tuple(str(x) for x in c.get("confirm", ())))
                                      for c in r.get("causes", ())),
                                str(r["fix"]), str(r["source"]), str(r.get("example", "")),
                                r.get("severity") == "fail")
                 for r in rows)


def by_id(sig_id: str) -> ErrorSignature | None:
    return next((s for s in signatures() if s.id == sig_id), None)


def match(text: str) -> tuple[ErrorSignature, ...]:
    """Every signature found in `text`, in table order."""
    if not isinstance(text, str) or not text:
        return ()
    return tuple(s for s in signatures() if s.search(text))
