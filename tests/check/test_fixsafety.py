"""Fix safety (issue #10 item 6): every fix command of every scenario fixture (the goldens' inputs) and every corpus
capture passes the validator; the validator itself catches the harmful fixes the issue names."""

from __future__ import annotations

from typing import Any

import pytest

from rocm_triton_doctor.check import diagnose
from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.findings import Finding, Fix, Severity
from rocm_triton_doctor.check.fixsafety import violations
from rocm_triton_doctor.check.sources import snapshot_from_text
from tests.check.conftest import AMD_LIVE, gpu, minimal_snapshot, node
from tests.check.corpus import all_captures
from tests.conftest import SCENARIOS, load_scenario

CAPTURES = all_captures()


def _all_violations(snap: dict[str, Any]) -> list[str]:
    report = diagnose(snap)
    return [f"{f.id}: {v}" for f in report.findings for v in violations(report.facts, f)]


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.json")))
def test_scenario_fixes_are_safe(name: str) -> None:
    assert _all_violations(load_scenario(name)) == []


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.name for c in CAPTURES])
def test_capture_fixes_are_safe(capture: Any) -> None:
    assert _all_violations(snapshot_from_text(list(capture.blocks))) == []


def _finding(*cmds: str) -> Finding:
    return Finding("x", Severity.FAIL, "t", fix=Fix("t", cmds))


def test_validator_catches_the_harmful_fixes_the_issue_names() -> None:
    cpu = "pip install --force-reinstall torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cpu"
    # the CPU index on an AMD machine, and on one whose hardware is unknown
    assert violations(build_facts(minimal_snapshot(files=AMD_LIVE)), _finding(cpu))
    assert violations(build_facts(minimal_snapshot()), _finding(cpu))
    # an override of another ISA family (gfx1031 is RDNA2: 11.0.0 is RDNA3), and one for a GPU nobody identified
    rdna2 = build_facts(minimal_snapshot(files={**AMD_LIVE, **gpu(1, 100301)}))
    assert violations(rdna2, _finding("export HSA_OVERRIDE_GFX_VERSION=11.0.0"))
    assert not violations(rdna2, _finding("export HSA_OVERRIDE_GFX_VERSION=10.3.0"))
    assert violations(build_facts(minimal_snapshot(files=AMD_LIVE)), _finding("export HSA_OVERRIDE_GFX_VERSION=10.3.0"))
    # usermod for a 0600 root node, unless a udev rule changes the mode first
    root_only = build_facts(minimal_snapshot(files=AMD_LIVE, paths={"/dev/kfd": node("0o20600", group="root")}))
    assert violations(root_only, _finding("sudo usermod -a -G render,video $LOGNAME"))
    assert not violations(root_only, _finding("echo 'KERNEL==\"kfd\"' | sudo tee /etc/udev/rules.d/x.rules",
                                              "sudo usermod -a -G render,video $LOGNAME"))
    # a bare pip when the interpreter is known
    known_py = build_facts(minimal_snapshot(python={"executable": "/opt/venv/bin/python", "version": "3.12.3"}))
    assert violations(known_py, _finding("pip uninstall -y pynvml"))
    assert not violations(known_py, _finding("/opt/venv/bin/python -m pip uninstall -y pynvml"))
