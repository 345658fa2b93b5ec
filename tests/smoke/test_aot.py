"""smoke/aot.py without compiling: target parsing, the verdicts as findings, and their human form."""

from __future__ import annotations

import pytest
from rich.console import Console

from rocm_triton_doctor.check.findings import Severity
from rocm_triton_doctor.result import Result
from rocm_triton_doctor.smoke import aot, render, targets
from rocm_triton_doctor.smoke.aot import AotResult


def test_parse_arch_accepts_known_targets_only() -> None:
    assert aot.parse_arch("gfx942, gfx1100,sm_90") == ["gfx942", "gfx1100", "sm_90"]
    assert "gfx942" in aot.parse_arch("all") and aot.parse_arch("all")[-2:] == ["sm_80", "sm_90"]
    for bad in ("gfx9999", "gfx942;rm -rf", "vax", ""):
        with pytest.raises(ValueError):
            aot.parse_arch(bad)


def test_verdicts_are_findings_with_ids() -> None:
    rs = [AotResult("gemm", "gfx942", True, spills=0), AotResult("softmax", "gfx942", True, spills=0),
          AotResult("gemm", "gfx1100", True, spills=12), AotResult("gemm", "gfx1030", False, error="RuntimeError: x")]
    found = aot.findings(rs, "3.6.0")
    assert [(f.id, f.severity, f.evidence[0]) for f in found] == [
        ("aot-compile", Severity.OK, "gfx942"), ("aot-spills", Severity.WARN, "gfx1100"),
        ("aot-compile", Severity.FAIL, "gfx1030")]
    assert found[0].title == "gfx942: all 2 kernels compiled with Triton 3.6.0"
    result = Result(aot.SCHEMA, "smoke --compile-only", "failed", 1, {"results": [r.to_dict() for r in rs]}, found)
    con = Console(record=True, width=200)
    render.aot_report(result, con)
    text = con.export_text()
    assert "gfx1030" in text and "✗ this Triton (3.6.0) cannot generate code for gfx1030" in text
    assert "[aot-spills]" in text


def test_performance_target_verdicts_are_findings() -> None:
    rows = [{"id": "mem-copy", "target": "memory-bound", "bound": 90.0, "unit": "%", "status": "met", "min": 95.0,
             "max": 99.0, "cases": [{"case": "rmsnorm[a]", "value": 95.0, "ok": True}]},
            {"id": "gemm-plain", "target": "GEMM", "bound": 0.9, "unit": "x", "status": "not met", "min": 0.5,
             "max": 0.5, "cases": [{"case": "gemm[b]", "value": 0.5, "ok": False}]},
            {"id": "attention", "target": "attention", "bound": 0.8, "unit": "x", "status": "not measured",
             "min": None, "max": None, "cases": [{"case": "attention[c]", "value": None, "ok": None}]}]
    found = targets.findings(rows)
    assert [(f.id, f.severity) for f in found] == [("perf-target-mem-copy", Severity.OK),
                                                   ("perf-target-gemm-plain", Severity.WARN),
                                                   ("perf-target-attention", Severity.INFO)]
    assert found[1].evidence == ("gemm[b]",) and "bound 0.9x" in found[1].title
