"""`fleet`: planted drift, failures and slow outliers; bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


from ..conftest import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]


def doctor(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocm_triton_doctor", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)



# -- fleet ----------------------------------------------------------------------------------------------------

def _check_json(scenario: str, host: str, **facts_patch: str) -> dict:
    res = doctor("check", "--snapshot", str(SCENARIOS / f"{scenario}.json"), "--json")
    data = json.loads(res.stdout)
    data["facts"]["host"] = host
    data["facts"].update(facts_patch)
    return data


def test_fleet_finds_planted_drift_failures_and_slow_outliers(tmp_path: Path) -> None:
    d = tmp_path / "results"
    d.mkdir()
    for i in range(4):
        (d / f"n{i}.json").write_text(json.dumps(_check_json("mi300x-healthy", f"node{i}")))
    (d / "n4.json").write_text(json.dumps(_check_json("mi300x-healthy", "node4", rocm="6.2.4", torch="2.5.1+rocm6.2")))
    (d / "n5.json").write_text(json.dumps(_check_json("user-not-in-render-group", "node5")))
    base = json.loads((ROOT / "docs" / "measurements" / "2026-11-21-h200-smoke-quick.json").read_text())
    for i, scale in enumerate((1.0, 1.02, 0.98, 0.5)):
        s = json.loads(json.dumps(base))
        s["host"] = f"node{i}"
        for r in s["results"]:
            r["pct_ceiling"] = (r["pct_ceiling"] or 0) * scale
        (d / f"s{i}.json").write_text(json.dumps(s))
    (d / "ignored.json").write_text('{"not": "ours"}')
    res = doctor("fleet", str(d), "--json")
    data = json.loads(res.stdout)
    by = {n["name"]: n for n in data["nodes"]}
    assert res.returncode == data["exit_code"] == 1  # node5 fails its checks
    assert by["node5"]["status"] == "fail" and by["node5"]["failing"]
    assert by["node4"]["drift"] == {"rocm": "6.3.3", "torch": "2.7.1+rocm6.3"}
    assert by["node3"]["slow"] and not by["node0"]["slow"] and not by["node1"]["slow"]
    assert by["node0"]["status"] == "ok"
    human = doctor("fleet", str(d))
    assert "node4: rocm is '6.2.4', the majority has '6.3.3'" in human.stdout


def test_fleet_bad_input() -> None:
    assert doctor("fleet", "/nonexistent").returncode == 3
    assert doctor("fleet").returncode == 2
