"""Findings: what a check says about this machine, with evidence and a fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from rocm_triton_doctor.result import ExitCode


class Severity(str, Enum):
    OK = "ok"
    INFO = "info"
    SKIP = "skip"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        return _RANK[self]


# Ids of checks whose `ok` is circumstantial: it says a part is in place (torch installed, no override set, not
# WSL) but not that GPU work would succeed. A verdict of healthy needs at least one ok from another check
# (registered by `@check(..., ok_is_evidence=False)` in checks/base.py).
CIRCUMSTANTIAL: set[str] = set()

_RANK = {Severity.OK: 0, Severity.INFO: 0, Severity.SKIP: 0, Severity.WARN: 1, Severity.FAIL: 2}

# The heading of each check group (a group is a module of checks/), in every renderer and in docs/findings.md.
GROUP_TITLES = {
    "platform": "Platform", "driver": "Kernel driver", "access": "Device access", "gpus": "GPUs",
    "overrides": "HSA overrides", "rocm": "System ROCm", "python": "Python", "torch": "PyTorch",
    "triton": "Triton", "codeobjects": "Code objects", "runtime": "Runtime imports", "errors": "Error messages",
    "visibility": "Device visibility", "probes": "Probes", "nvidia": "NVIDIA", "multigpu": "Multi-GPU collectives",
    "workload": "The workload's environment", "smoke_history": "Saved smoke runs",
}


@dataclass(frozen=True)
class Fix:
    """How to repair a finding: copy-pasteable commands plus the words around them."""

    text: str
    commands: tuple[str, ...] = ()
    needs_sudo: bool = False
    needs_relogin: bool = False
    needs_reboot: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "commands": list(self.commands),
            "needs_sudo": self.needs_sudo,
            "needs_relogin": self.needs_relogin,
            "needs_reboot": self.needs_reboot,
        }


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    title: str
    detail: str = ""
    evidence: tuple[str, ...] = ()
    fix: Fix | None = None
    links: tuple[str, ...] = ()
    group: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "group": self.group,
            "severity": self.severity.value,
            "title": self.title,
            "detail": self.detail,
            "evidence": list(self.evidence),
            "fix": self.fix.to_dict() if self.fix else None,
            "links": list(self.links),
        }


@dataclass(frozen=True)
class Verdict:
    status: str  # "healthy" | "warnings" | "problems" | "could-not-check"
    exit_code: ExitCode
    counts: dict[str, int] = field(default_factory=dict)
    summary: str = ""


def verdict_for(findings: list[Finding] | tuple[Finding, ...], strict: bool = False) -> Verdict:
    counts = {s.value: 0 for s in Severity}
    for f in findings:
        counts[f.severity.value] += 1
    if counts["fail"]:
        status, code = "problems", ExitCode.PROBLEMS
        summary = f"{counts['fail']} problem(s) found" + (f", {counts['warn']} warning(s)" if counts["warn"] else "")
    elif counts["warn"]:
        status = "warnings"
        code = ExitCode.PROBLEMS if strict else ExitCode.HEALTHY
        summary = f"no blocking problems, {counts['warn']} warning(s)" + (" (--strict: warnings fail)" if strict else "")
    elif findings and not any(f.severity is Severity.OK and f.id not in CIRCUMSTANTIAL for f in findings):
        # Healthy needs evidence: a snapshot whose checks all skipped (or only listed facts) proves nothing works
        # (issue #10: a paste with nothing checkable is "could not check", exit 3, never "ok").
        status, code = "could-not-check", ExitCode.COULD_NOT_CHECK
        summary = "nothing could be confirmed: the evidence given is not enough for any check (see the skipped checks)"
    else:
        status, code, summary = "healthy", ExitCode.HEALTHY, "no problems found"
    return Verdict(status=status, exit_code=code, counts=counts, summary=summary)
