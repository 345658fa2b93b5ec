"""The saved smoke runs' torch.compile attempts (snapshot key `smoke_results`, check/probes/smoke_history.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocm_triton_doctor.check.facts.base import Fact, error, found, section

KEY = "smoke_results"
NO_RUNS = "smoke_results has no list of runs"


@dataclass(frozen=True)
class CompileAttempt:
    what: str  # "compile form", "softmax bfloat16 4096x4096"
    ok: bool
    error: str = ""


@dataclass(frozen=True)
class SavedRun:
    kind: str  # "kernels" | "model"
    path: str
    modified: str | None
    started: str | None
    host: str | None
    device_name: str | None
    target: str | None  # "hip:gfx1100"
    torch: str | None
    triton: str | None
    attempts: tuple[CompileAttempt, ...]
    error: str | None = None  # the file could not be read

    @property
    def on_cpu(self) -> bool:
        """The run was on the CPU (Triton's interpreter; torch.compile there is inductor's C++ backend)."""
        return bool((self.target and self.target.startswith("interpreter"))
                    or (self.device_name and self.device_name.startswith("CPU")))

    @property
    def arch(self) -> str | None:
        return self.target.split(":", 1)[1] if self.target and ":" in self.target else self.target


def _s(v: Any) -> str | None:
    return str(v) if v not in (None, "") else None


def smoke_results_fact(snap: Mapping[str, Any]) -> Fact[Any]:
    sec = section(snap, KEY, NO_RUNS)
    if isinstance(sec, Fact):
        return sec
    if not isinstance(sec.get("runs"), list):
        return error(KEY, NO_RUNS)
    runs = []
    for r in sec["runs"]:
        if not isinstance(r, Mapping):
            continue
        tried = r.get("compile")
        attempts = tuple(CompileAttempt(str(a.get("what") or "?"), bool(a.get("ok")), str(a.get("error") or ""))
                         for a in (tried if isinstance(tried, list) else [])
                         if isinstance(a, Mapping) and isinstance(a.get("ok"), bool))
        runs.append(SavedRun(str(r.get("kind") or "?"), str(r.get("path") or "?"), _s(r.get("modified")),
                             _s(r.get("started")), _s(r.get("host")), _s(r.get("device_name")), _s(r.get("target")),
                             _s(r.get("torch")), _s(r.get("triton")), attempts, _s(r.get("error"))))
    return found(tuple(runs), KEY)
