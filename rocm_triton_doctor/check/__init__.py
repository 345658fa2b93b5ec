"""The result of `check`: snapshot → facts → findings → verdict, in one value the renderers format."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rocm_triton_doctor import __version__, knowledge
from rocm_triton_doctor.check.checks import INTERNAL_ERROR, REGISTRY, run_checks
from rocm_triton_doctor.check.checks.base import Check
from rocm_triton_doctor.exitcodes import ExitCode
from rocm_triton_doctor.check.facts import Facts, build_facts
from rocm_triton_doctor.check.findings import Finding, Severity, Verdict, verdict_for
from rocm_triton_doctor.check.summary import facts_summary

JSON_SCHEMA = "rocm-triton-doctor/check/1"


@dataclass(frozen=True)
class CheckReport:
    snapshot: dict[str, Any]
    facts: Facts
    findings: tuple[Finding, ...]
    verdict: Verdict
    source: str  # "this machine" or the snapshot path
    knowledge_as_of: str = field(default_factory=knowledge.as_of)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": JSON_SCHEMA,
            "command": "check",
            "tool_version": __version__,
            "status": self.verdict.status,
            "exit_code": int(self.verdict.exit_code),
            "summary": self.verdict.summary,
            "counts": self.verdict.counts,
            "source": self.source,
            "knowledge_as_of": self.knowledge_as_of,
            "findings": [f.to_dict() for f in self.findings],
            "facts": facts_summary(self.facts),
        }


def diagnose(snapshot: dict[str, Any], checks: Sequence[Check] = REGISTRY, strict: bool = False,
             source: str = "this machine") -> CheckReport:
    facts = build_facts(snapshot)
    findings = tuple(run_checks(facts, checks))
    verdict = verdict_for(findings, strict=strict)
    if any(f.id == INTERNAL_ERROR for f in findings):
        verdict = Verdict("crashed", ExitCode.CRASHED, verdict.counts,
                          "a check crashed (internal-error) — " + verdict.summary)
    elif findings and all(f.severity is Severity.SKIP for f in findings):
        verdict = Verdict("could-not-check", ExitCode.COULD_NOT_CHECK, verdict.counts,
                          "nothing could be checked: the snapshot holds no usable facts")
    return CheckReport(snapshot, facts, findings, verdict, source)
