"""`install --source`: the AMD wheel source is chosen on the command line and the plan says which and why (#15)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from rocm_triton_doctor.cli import cli

SNAP = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "rx7900xtx-healthy.json"


def _plan(*extra: str) -> dict:
    r = CliRunner().invoke(cli, ["install", "--dry-run", "--snapshot", str(SNAP), "--venv", "/tmp/rtd-x", "--json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_source_therock_plans_the_multi_arch_wheels_with_the_device_extra() -> None:
    plan = _plan("--source", "therock")
    assert plan["source"]["name"] == "therock" and plan["source"]["why"]
    assert any("device-gfx1100" in req for req in plan["install"]), plan["install"]


def test_source_pytorch_is_the_default_route_for_a_target_pytorch_org_carries() -> None:
    assert _plan()["source"]["name"] == _plan("--source", "pytorch")["source"]["name"] == "pytorch"


def test_an_unknown_source_is_a_usage_error() -> None:
    r = CliRunner().invoke(cli, ["install", "--dry-run", "--snapshot", str(SNAP), "--source", "conda"])
    assert r.exit_code == 2
