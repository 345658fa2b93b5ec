"""The result of `check`: snapshot → facts → findings → verdict, in one value the renderers format."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks import INTERNAL_ERROR, REGISTRY, run_checks
from rocm_triton_doctor.check.checks.base import Check
from rocm_triton_doctor.result import ExitCode, Result
from rocm_triton_doctor.check.facts import Facts, build_facts
from rocm_triton_doctor.check.findings import Finding, Severity, Verdict, verdict_for
from rocm_triton_doctor.check.summary import facts_summary

JSON_SCHEMA = "check/1"


@dataclass(frozen=True)
class CheckReport:
    snapshot: dict[str, Any]
    facts: Facts
    findings: tuple[Finding, ...]
    verdict: Verdict
    source: str  # "this machine" or the snapshot path
    knowledge_as_of: str = field(default_factory=knowledge.as_of)

    def to_result(self) -> Result:
        """The `check --json` envelope (docs/check.md): the verdict, then summary, counts, source, knowledge date
        and the facts summary, then the findings."""
        v = self.verdict
        return Result(JSON_SCHEMA, "check", v.status, int(v.exit_code),
                      {"summary": v.summary, "counts": v.counts, "source": self.source,
                       "knowledge_as_of": self.knowledge_as_of, "facts": facts_summary(self.facts)}, self.findings)

    def to_dict(self) -> dict[str, Any]:
        return self.to_result().to_dict()


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


def load_or_collect(snapshot_path: str | None, *, root: str = "/", python: str | None = None, runtime: bool = True,
                    timeout: float = 10.0, runtime_timeout: float = 120.0,
                    progress: Callable[[Any], dict[str, Any]] | None = None,
                    from_text: Sequence[str] = (),
                    workload: tuple[int | None, str | None] = (None, None)) -> tuple[dict[str, Any], str]:
    """The snapshot to diagnose and where it came from: pasted text files (`-` = stdin; check/sources), a saved file
    (SnapshotError on a bad one) or this machine. `progress(collector)` may run the collection itself (the CLI's
    spinner); by default it simply collects."""
    from rocm_triton_doctor.check import snapshot

    if from_text:
        return _from_text(from_text)
    if snapshot_path:
        return snapshot.load(snapshot_path), snapshot_path
    from rocm_triton_doctor.check.probes.collect import Collector

    # Start the torch subprocess first: it is the slow part and overlaps everything else (DESIGN §3).
    collector = Collector(root=root, python=python, runtime=runtime, timeout=timeout, runtime_timeout=runtime_timeout,
                          workload_pid=workload[0], workload_unit=workload[1])  # check --pid / --unit
    collector.start()
    snap = progress(collector) if progress else collector.collect()
    return snap, "this machine" if root == "/" else f"root {root}"


def _from_text(paths: Sequence[str]) -> tuple[dict[str, Any], str]:
    """Pasted text -> the same snapshot the probes make. Unreadable input is a SnapshotError (exit 3)."""
    import sys

    from rocm_triton_doctor.check.snapshot import SnapshotError
    from rocm_triton_doctor.check.sources import snapshot_from_text

    texts = []
    for p in paths:
        try:
            if p == "-":
                texts.append(sys.stdin.read())
            else:
                with open(p, encoding="utf-8", errors="replace") as fh:
                    texts.append(fh.read())
        except OSError as exc:
            raise SnapshotError(f"cannot read pasted text {p}: {exc.strerror or exc}") from None
    if not any(t.strip() for t in texts):
        raise SnapshotError("the pasted text is empty")
    names = ", ".join("stdin" if p == "-" else p for p in paths)
    return snapshot_from_text(texts), f"pasted text ({names})"
