"""`smoke --distributed`: 2 processes on CPU through gloo and Triton's interpreter."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path



ROOT = Path(__file__).resolve().parents[2]


def doctor(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocm_triton_doctor", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)



# -- distributed smoke ----------------------------------------------------------------------------------------

def torchrun(*args: str, timeout: int = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    exe = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    t0 = time.monotonic()
    res = subprocess.run([exe, "--nproc-per-node", "2", "-m", "rocm_triton_doctor", "smoke", "--distributed",
                          "--device", "cpu", "--only", "softmax", "--collective-max-mib", "0.1", "--json", *args],
                         capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return res, time.monotonic() - t0


def _json(res: subprocess.CompletedProcess[str]) -> dict:
    start = res.stdout.index("{")
    return json.loads(res.stdout[start:])


def test_distributed_two_ranks_on_cpu_with_gloo() -> None:
    res, secs = torchrun("--rank-timeout", "60")
    data = _json(res)
    assert res.returncode == 0 and data["status"] == "passed" and data["world_size"] == 2
    assert secs < 120
    for r in data["ranks"]:
        ops = {(c["op"], c["dtype"]) for c in r["collectives"]}
        assert ops == {("all_reduce", "float32"), ("all_reduce", "bfloat16"), ("all_gather", "float32"),
                       ("broadcast", "float32")}
        assert all(c["ok"] for c in r["collectives"]), r["collectives"]
        assert all(c["busbw_gbps"] > 0 for c in r["collectives"]), r["collectives"]
        for c in r["collectives"]:  # nccl-tests' bus-bandwidth factors for n = 2 ranks
            factor = {"all_reduce": 2 * (2 - 1) / 2, "all_gather": (2 - 1) / 2, "broadcast": 1.0}[c["op"]]
            assert abs(c["busbw_gbps"] - c["algbw_gbps"] * factor) <= 1e-5 + 1e-3 * c["algbw_gbps"]


def test_distributed_reports_a_failing_and_a_hung_rank() -> None:
    res, _ = torchrun("--rank-timeout", "60", "--fail-rank", "1")
    data = _json(res)
    assert res.returncode == 1 and data["ranks"][1]["status"] == "fail" and data["ranks"][0]["status"] == "pass"
    res, secs = torchrun("--rank-timeout", "6", "--hang-rank", "1")
    data = _json(res)
    assert res.returncode == 1 and data["ranks"][1]["status"] == "no answer"
    assert "did not report within 6 s" in data["ranks"][1]["error"]
    assert secs < 60
