"""The one result type every command returns, its exit codes, and the one place JSON envelopes are built.

Modelled on pipx's single result type (style-models.md §3.3 P4): a command module parses options, calls one
function that returns a `Result`, hands it to `render.emit`, and exits with `result.exit_code`. Every `--json`
document therefore has the same head: schema, command, tool_version, status, exit_code — then the command's own
fields (`data`), then `findings` (the same Finding objects `check` emits; AOT-audit and performance-target verdicts
are findings too, with ids such as `aot-compile`, `aot-spills`, `perf-target-gemm-plain`).

This module imports nothing from the pipeline at import time (check/findings.py imports ExitCode from here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocm_triton_doctor.check.findings import Finding

SCHEMA_PREFIX = "rocm-triton-doctor/"


class ExitCode(IntEnum):
    """The one exit-code contract shared by every command (DESIGN §6; docs/check.md "Exit codes")."""

    HEALTHY = 0  # warnings allowed; --strict turns warnings into PROBLEMS
    PROBLEMS = 1  # a `fail` finding, a wrong result, a failed install
    USAGE = 2  # bad options (Click's own code), checked before any work
    COULD_NOT_CHECK = 3  # no verdict possible: probes broke, smoke could not start, an output could not be written
    CRASHED = 4  # the doctor itself crashed
    # Shell conventions for death by a signal (128 + signal number), so scripts can tell them apart from verdicts:
    INTERRUPTED = 130  # Ctrl-C (SIGINT = 2): one line "interrupted", no traceback
    BROKEN_PIPE = 141  # stdout closed by the reader (SIGPIPE = 13, e.g. `| head -1`): quiet, no traceback


def status_for_error(code: int) -> str:
    return "could-not-check" if code == ExitCode.COULD_NOT_CHECK else "error"


@dataclass(frozen=True)
class Result:
    schema: str  # without the prefix, e.g. "check/1"
    command: str  # e.g. "check", "smoke --compile-only"
    status: str  # the command's verdict word: healthy, problems, passed, failed, planned, installed, error, ...
    exit_code: int
    data: Mapping[str, Any] = field(default_factory=dict)  # the command's own documented fields, in order
    findings: tuple[Finding, ...] = ()
    message: str = ""  # set on errors: the one line a human sees on stderr

    @classmethod
    def error(cls, command: str, message: str, code: int = ExitCode.COULD_NOT_CHECK, schema: str | None = None) -> Result:
        """The error envelope of any command (the same fields whatever went wrong)."""
        return cls(schema or f"{command.split()[0]}/1", command, status_for_error(code), int(code),
                   {"error": message}, (), message)

    @property
    def ok(self) -> bool:
        return self.exit_code == ExitCode.HEALTHY

    def to_dict(self) -> dict[str, Any]:
        from rocm_triton_doctor import __version__

        out: dict[str, Any] = {"schema": SCHEMA_PREFIX + self.schema, "command": self.command,
                               "tool_version": __version__, "status": self.status, "exit_code": int(self.exit_code)}
        out.update(self.data)
        out["findings"] = [f.to_dict() for f in self.findings]
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        """Read back any command's `--json` (fleet reads results this way: findings become Finding objects)."""
        schema = str(d.get("schema", ""))
        head = {"schema", "command", "tool_version", "status", "exit_code", "findings"}
        findings = tuple(finding_from_dict(f) for f in d.get("findings") or () if isinstance(f, Mapping))
        code = d.get("exit_code")
        return cls(schema.removeprefix(SCHEMA_PREFIX), str(d.get("command", "")), str(d.get("status", "")),
                   int(code) if isinstance(code, int) else int(ExitCode.COULD_NOT_CHECK),
                   {k: v for k, v in d.items() if k not in head}, findings, str(d.get("error") or ""))


def finding_from_dict(d: Mapping[str, Any]) -> Finding:
    """The inverse of Finding.to_dict(); an unknown severity reads as `skip` (never a crash on foreign input)."""
    from rocm_triton_doctor.check.findings import Finding, Fix, Severity

    try:
        severity = Severity(d.get("severity"))
    except ValueError:
        severity = Severity.SKIP
    fx = d.get("fix")
    fix = None
    if isinstance(fx, Mapping):
        fix = Fix(str(fx.get("text", "")), tuple(str(c) for c in fx.get("commands") or ()), bool(fx.get("needs_sudo")),
                  bool(fx.get("needs_relogin")), bool(fx.get("needs_reboot")))
    return Finding(str(d.get("id", "")), severity, str(d.get("title", "")), str(d.get("detail") or ""),
                   tuple(str(e) for e in d.get("evidence") or ()), fix, tuple(str(u) for u in d.get("links") or ()),
                   str(d.get("group") or ""))
