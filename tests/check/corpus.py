"""The capture corpus (tests/fixtures/captures, format in its README.md): loading and scoring.

Scoring one capture = run its text blocks through snapshot_from_text -> diagnose and compare with its header:
* verdict: `fail` = exit 1 with a fail finding; `warn` = no fail, ≥ 1 warn; `ok` = status healthy (no warn/fail and
  not could-not-check); `unknown` = could-not-check (exit 3), or problems reported WITHOUT any fix command (the
  doctor named no remedy and asked for evidence).
* fix: every `fix-must` token appears (case-insensitive) in the text or a command of some fail/warn finding's fix;
* harm: no `fix-must-not` token appears (case-insensitive) in ANY finding's fix text or commands;
* `expect-ids`: each id is the id of some finding.
A capture is correct when verdict, fix and expect-ids are right and nothing harmful is proposed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rocm_triton_doctor.check import CheckReport
from rocm_triton_doctor.check.findings import Severity
from rocm_triton_doctor.check.sources import diagnose_text

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
VERDICTS = ("fail", "warn", "ok", "unknown")


@dataclass(frozen=True)
class Capture:
    path: Path
    header: dict[str, str]
    blocks: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.path.stem

    def tokens(self, key: str) -> tuple[str, ...]:
        return tuple(t.strip() for t in self.header.get(key, "").split(" ; ") if t.strip())

    @property
    def cause(self) -> str:
        return self.header.get("cause", "?")

    @property
    def verdict(self) -> str:
        return self.header.get("verdict", "?")


def load(path: Path) -> Capture:
    text = path.read_text(encoding="utf-8")
    head, sep, body = text.partition("\n---\n")
    if not sep:
        raise ValueError(f"{path.name}: no '---' line between header and text")
    header: dict[str, str] = {}
    for line in head.splitlines():
        if line.startswith("# ") and ":" in line:
            key, _, value = line[2:].partition(":")
            header[key.strip()] = value.strip()
    blocks: list[str] = []
    cur: list[str] = []
    for line in body.split("\n"):
        if line.startswith("~~~ "):  # a block label written by the collector: metadata, never fed to the parser
            if any(c.strip() for c in cur):
                blocks.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    if any(c.strip() for c in cur):
        blocks.append("\n".join(cur))
    return Capture(path, header, tuple(blocks))


def all_captures() -> list[Capture]:
    return [load(p) for p in sorted(CAPTURES.glob("*.txt"))]


@dataclass
class Score:
    capture: Capture
    got_verdict: str
    verdict_ok: bool
    missing_tokens: tuple[str, ...]
    harmful: tuple[str, ...]
    missing_ids: tuple[str, ...]
    report: CheckReport = field(repr=False)

    @property
    def correct(self) -> bool:
        return self.verdict_ok and not self.missing_tokens and not self.harmful and not self.missing_ids


def got_verdict(report: CheckReport) -> str:
    code = int(report.verdict.exit_code)
    if code == 3:
        return "unknown"
    if code == 4:
        return "crashed"
    sev = {f.severity for f in report.findings}
    if Severity.FAIL in sev:
        return "fail"
    if Severity.WARN in sev:
        return "warn"
    return "ok"


def _fix_texts(report: CheckReport, severities: set[Severity] | None = None) -> list[str]:
    out = []
    for f in report.findings:
        if f.fix is None or (severities is not None and f.severity not in severities):
            continue
        out.append(f.fix.text)
        out.extend(f.fix.commands)
    return out


def score(c: Capture) -> Score:
    report = diagnose_text(list(c.blocks))
    got = got_verdict(report)
    want = c.verdict
    problem_fix_cmds = [cmd for f in report.findings if f.severity in (Severity.FAIL, Severity.WARN) and f.fix
                        for cmd in f.fix.commands]
    if want == "unknown":
        ok = got == "unknown" or (got in ("fail", "warn") and not problem_fix_cmds)
    else:
        ok = got == want
    fixes = " \n".join(_fix_texts(report, {Severity.FAIL, Severity.WARN})).lower()
    missing = tuple(t for t in c.tokens("fix-must") if t.lower() not in fixes)
    every_fix = " \n".join(_fix_texts(report)).lower()
    harmful = tuple(t for t in c.tokens("fix-must-not") if t.lower() in every_fix)
    ids = {f.id for f in report.findings}
    missing_ids = tuple(i for i in c.tokens("expect-ids") if i not in ids)
    return Score(c, got, ok, missing, harmful, missing_ids, report)
