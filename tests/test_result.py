"""result.py: one Result type, one envelope head for every command, findings that survive a JSON round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from rocm_triton_doctor import __version__, render
from rocm_triton_doctor.check.findings import Finding, Fix, Severity
from rocm_triton_doctor.cli import cli
from rocm_triton_doctor.result import ExitCode, Result, finding_from_dict

from .conftest import SCENARIOS

HEAD = ["schema", "command", "tool_version", "status", "exit_code"]


def test_exit_codes_are_the_documented_contract() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 130, 141]


def test_envelope_head_then_data_then_findings() -> None:
    f = Finding("aot-spills", Severity.WARN, "gfx942: spills", evidence=("gfx942",), group="aot",
                fix=Fix("lower the tile", ("export X=1",), needs_sudo=True), links=("https://example.com",))
    r = Result("smoke-aot/2", "smoke --compile-only", "passed", 0, {"triton": "3.6.0", "targets": ["gfx942"]}, (f,))
    d = r.to_dict()
    assert list(d) == [*HEAD, "triton", "targets", "findings"]
    assert d["schema"] == "rocm-triton-doctor/smoke-aot/2" and d["tool_version"] == __version__
    back = Result.from_dict(json.loads(r.to_json()))
    assert back.findings == (f,) and back.schema == "smoke-aot/2" and back.data == {"triton": "3.6.0",
                                                                                     "targets": ["gfx942"]}


def test_error_envelope_is_the_same_for_every_command() -> None:
    for code, status in ((ExitCode.COULD_NOT_CHECK, "could-not-check"), (ExitCode.PROBLEMS, "error")):
        d = Result.error("fleet", "no results", code).to_dict()
        assert d == {"schema": "rocm-triton-doctor/fleet/1", "command": "fleet", "tool_version": __version__,
                     "status": status, "exit_code": int(code), "error": "no results", "findings": []}


def test_foreign_findings_never_crash_the_reader() -> None:
    f = finding_from_dict({"id": "x", "severity": "bogus", "evidence": None, "fix": "not a dict"})
    assert f.severity is Severity.SKIP and f.fix is None and f.evidence == ()
    assert Result.from_dict({"schema": "rocm-triton-doctor/check/1", "exit_code": "x"}).exit_code == 3


def test_every_command_json_has_the_same_head(tmp_path: Path) -> None:
    snap = str(SCENARIOS / "mi300x-healthy.json")
    check = CliRunner().invoke(cli, ["check", "--snapshot", snap, "--json"])
    (tmp_path / "n.json").write_text(check.output)
    outs = [json.loads(check.output)]
    outs.append(json.loads(CliRunner().invoke(cli, ["fleet", str(tmp_path), "--json"]).output))
    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "install", "--snapshot", snap, "--dry-run",
                          "--json"], capture_output=True, text=True, timeout=120)
    outs.append(json.loads(res.stdout))
    outs.append(json.loads(CliRunner().invoke(cli, ["fleet", str(tmp_path / "none"), "--json"]).output))
    for d in outs:
        assert list(d)[:5] == HEAD and d["tool_version"] == __version__ and isinstance(d["findings"], list), d
    assert [d["command"] for d in outs] == ["check", "fleet", "install", "fleet"]
    assert [d["status"] for d in outs] == ["healthy", "ok", "planned", "could-not-check"]


def test_the_ascii_fallback_names_our_own_symbols() -> None:
    text = "✓ ok — ✗ bad ≠ x … → ☃"
    assert text.encode("ascii", errors=render.ERRORS).decode() == "+ ok - x bad != x ... -> ?"
