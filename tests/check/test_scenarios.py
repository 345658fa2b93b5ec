"""Layer (c): whole-scenario snapshots (from public captures) -> findings and verdict.

Golden files hold every finding's id and severity; regenerate them only with `pytest --update-golden` and read the
diff. The table below states the intent of each scenario independently of the golden files.
"""

from __future__ import annotations

import json

import pytest

from rocm_triton_doctor.check import diagnose

from ..conftest import FIXTURES, SCENARIOS, load_scenario

GOLDEN = FIXTURES / "golden"

# scenario -> (exit code, {finding id: severity that MUST appear})
EXPECT: dict[str, tuple[int, dict[str, str]]] = {
    "mi300x-healthy": (0, {"gfx-torch-arch": "ok", "triton-backend": "ok", "torch-sees-gpu": "ok"}),
    "rx7900xtx-healthy": (0, {"gfx-torch-arch": "ok", "kfd-access": "ok"}),
    "gfx1031-needs-override": (1, {"hsa-override-needed": "fail", "gfx-torch-arch": "fail"}),
    "gfx1032-override-set": (0, {"gfx-torch-arch": "ok", "hsa-override-needed": "ok"}),
    "gfx1102-wheel-lacks-target": (1, {"gfx-torch-arch": "fail", "hsa-override-needed": "fail"}),
    # gfx1151 is supported natively from ROCm 7.1: a newer wheel, never an override (issue #10)
    "strix-halo-rocm6-wheel": (1, {"gfx-torch-arch": "fail", "hsa-override-needed": "info"}),
    "igpu-dgpu-global-override": (1, {"hsa-override-harmful": "fail", "igpu-with-dgpu": "warn"}),
    "mixed-dgpu-global-override": (1, {"hsa-override-harmful": "fail"}),
    "kfd-root-only": (1, {"kfd-access": "fail"}),
    "user-not-in-render-group": (1, {"kfd-access": "fail", "render-access": "fail"}),
    "container-without-kfd": (1, {"container-passthrough": "fail"}),
    "wsl-rx7800xt": (1, {"wsl": "fail"}),
    "cuda-torch-on-amd": (1, {"torch-build-mismatch": "fail"}),
    "cpu-torch-python37": (1, {"torch-build-mismatch": "fail", "python-version-wheels": "fail"}),
    "two-triton-dists": (1, {"triton-duplicate-dists": "fail"}),
    "rocm57-ubuntu2404": (1, {"os-supported": "fail"}),
    "kernel-without-hsa": (1, {"kernel-config-hsa": "fail", "kfd-present": "fail"}),
    "nvidia-h200-healthy": (0, {"torch-build-mismatch": "ok", "triton-backend": "ok", "nvidia-driver": "info"}),
    "cpu-only": (0, {"gpus-detected": "info"}),
}
ALL = sorted(p.stem for p in SCENARIOS.glob("*.json"))


def test_every_scenario_has_expectations() -> None:
    assert sorted(EXPECT) == ALL


def test_every_scenario_names_its_source() -> None:
    for name in ALL:
        snap = load_scenario(name)
        assert snap.get("source"), f"{name}: say where the capture comes from"


@pytest.mark.parametrize("name", ALL)
def test_scenario(name: str, update_golden: bool) -> None:
    report = diagnose(load_scenario(name), source=name)
    code, must = EXPECT[name]
    got = {}
    for f in report.findings:
        got.setdefault(f.id, []).append(f.severity.value)
    for check_id, sev in must.items():
        assert sev in got.get(check_id, []), f"{name}: expected {check_id}={sev}, got {got.get(check_id)}"
    assert int(report.verdict.exit_code) == code, report.verdict.summary
    assert "internal-error" not in got
    golden = {"status": report.verdict.status, "exit_code": int(report.verdict.exit_code), "findings": got}
    path = GOLDEN / f"{name}.json"
    if update_golden or not path.exists():
        path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    assert json.loads(path.read_text()) == golden, f"{name}: output changed; review and rerun with --update-golden"
