"""`smoke` end to end on the CPU, and the compile-only audit for AMD and NVIDIA targets (no GPU)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def smoke(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "smoke", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_cpu_quick_json() -> None:
    res = smoke("--device", "cpu", "--preset", "quick", "--json")
    data = json.loads(res.stdout)
    assert res.returncode == data["exit_code"] == 0, [r for r in data["results"] if r["status"] != "pass"]
    assert data["schema"] == "rocm-triton-doctor/smoke/1" and data["ceilings"] is None
    assert {r["kernel"] for r in data["results"]} >= {"gemm", "add_mul", "bias_gelu_dropout_residual", "rmsnorm",
                                                      "layernorm", "softmax", "swiglu", "attention"}
    assert all(r["triton_ms"] is None for r in data["results"])  # interpreter: no times, and the notes say why
    assert any("correctness only" in n for n in data["notes"])


def test_broken_case_is_reported_not_crashed(tmp_path: Path) -> None:
    junit = tmp_path / "j.xml"
    res = smoke("--device", "cpu", "--only", "softmax", "--broken", "crash", "--json", "--junit", str(junit))
    data = json.loads(res.stdout)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    broken = [r for r in data["results"] if r["kernel"] == "broken"][0]
    assert broken["status"] == "error" and "deliberately broken" in broken["error"]
    assert [r["status"] for r in data["results"] if r["kernel"] == "softmax"] == ["pass"] * 3
    suite = ET.parse(junit).getroot()
    assert suite.get("errors") == "1" and suite.get("tests") == "4"


def test_wrong_result_fails_with_exit_1() -> None:
    res = smoke("--device", "cpu", "--only", "add_mul", "--broken", "wrong")
    assert res.returncode == 1 and "outside tolerance" in res.stdout


def test_usage_errors() -> None:
    assert smoke("--device", "cpu", "--only", "nope").returncode == 2
    assert smoke("--arch", "gfx942").returncode == 2
    assert smoke("--compile-only", "--arch", "vax").returncode == 2


def test_gpu_requested_without_gpu_is_exit_3() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    res = smoke("--device", "gpu", "--json")
    assert res.returncode == 3 and json.loads(res.stdout)["exit_code"] == 3


def test_compile_only_audit_amd_and_nvidia() -> None:
    res = smoke("--compile-only", "--arch", "gfx942,gfx1100,sm_90", "--json")
    data = json.loads(res.stdout)
    by = {(r["target"], r["kernel"]): r for r in data["results"]}
    assert all(r["ok"] for r in data["results"]), [r for r in data["results"] if not r["ok"]]
    for target in ("gfx942", "gfx1100"):
        rows = [r for (t, _), r in by.items() if t == target]
        assert rows and all(r["vgpr"] and r["vgpr"] > 0 and r["sgpr"] > 0 and r["spills"] is not None for r in rows)
    assert all(r["occupancy"] for (t, _), r in by.items() if t == "gfx942")
    # RDNA: the occupancy LLVM itself computed, read off the assembly
    assert all(r["occupancy"] and "(LLVM)" in r["occupancy"] for (t, _), r in by.items() if t == "gfx1100")
    nv = [r for (t, _), r in by.items() if t == "sm_90"]
    assert nv and all(r["registers"] and r["registers"] > 0 and r["spills"] is not None for r in nv)
    assert {f["target"] for f in data["findings"]} == {"gfx942", "gfx1100", "sm_90"}


def test_compile_only_turns_a_codegen_failure_into_a_fail_finding() -> None:
    import triton

    res = smoke("--compile-only", "--arch", "gfx1030", "--json")
    data = json.loads(res.stdout)
    if all(r["ok"] for r in data["results"]):
        assert res.returncode == 0  # this Triton can compile for gfx1030 (e.g. 3.6)
        return
    assert res.returncode == 1
    f = data["findings"][0]
    assert f["severity"] == "fail" and "gfx1030" in f["title"] and triton.__version__ in f["title"]
    if triton.__version__ == "3.9.0":
        assert "Triton 3.6.0 compiles" in f["title"]


def test_smoke_runs_in_another_interpreter(tmp_path: Path) -> None:
    """--python re-executes the suite in that interpreter (here: the same one reached through another path)."""
    other = tmp_path / "python"
    other.symlink_to(sys.executable)
    res = smoke("--python", str(other), "--device", "cpu", "--only", "softmax", "--json")
    data = json.loads(res.stdout)
    assert res.returncode == 0 and [r["status"] for r in data["results"]] == ["pass"] * 3


def test_launch_bound_uses_the_roofline_time_not_the_noisy_median() -> None:
    from types import SimpleNamespace

    from rocm_triton_doctor.smoke.runner import launch_bound, roofline_us
    from rocm_triton_doctor.smoke.timing import Ceilings

    h200 = Ceilings(copy_gbps=4150.0, matmul_tflops={"float16": 660.0})
    tiny_gemm = SimpleNamespace(kernel="gemm", flops=2.0 * 64 * 256 * 128, bytes=115e3)
    big_gemm = SimpleNamespace(kernel="gemm", flops=2.0 * 4096**3, bytes=100e6)
    big_norm = SimpleNamespace(kernel="rmsnorm", flops=4.0 * 65536 * 8192, bytes=4.3e9)
    small_norm = SimpleNamespace(kernel="rmsnorm", flops=4.0 * 2048 * 4096, bytes=33.6e6)
    # A launch-bound GEMM whose event-timed median came out at 21 us is still launch-bound (0.01 us of work).
    assert launch_bound(0.021, roofline_us(tiny_gemm, h200, "float16"))
    assert not launch_bound(0.2, roofline_us(big_gemm, h200, "float16"))
    assert not launch_bound(1.03, roofline_us(big_norm, h200, "float32"))
    assert launch_bound(0.015, roofline_us(small_norm, h200, "float16"))  # 8 us of traffic at the copy ceiling
    # measured under 10 us: launch-bound whatever the roofline
    assert launch_bound(0.005, roofline_us(big_gemm, h200, "float16"))
    assert not launch_bound(0.2, roofline_us(big_gemm, Ceilings(0.0, {}), "float16"))  # no ceilings: median only
    mid_gemm = SimpleNamespace(kernel="gemm", flops=2.0 * 2048**3, bytes=25e6)  # 26 us of tensor-core time
    # 54 us event-timed, 26 us in a graph
    assert launch_bound(0.054, roofline_us(mid_gemm, h200, "float16"), graph_us=26.4)
    assert not launch_bound(0.028, roofline_us(mid_gemm, h200, "float16"), graph_us=26.4)


def _result(kernel: str, dtype: str, **kw: object) -> dict:
    base = {"kernel": kernel, "case": kw.pop("case", "c"), "dtype": dtype, "status": "pass", "bytes": 0.0,
            "seed_shape": False, "params": {}}
    base.update(kw)
    return base


def test_performance_targets_are_judged_per_case() -> None:
    from rocm_triton_doctor.smoke import targets

    big = 512 * 2**20
    results = [
        _result("rmsnorm", "float32", bytes=big, pct_ceiling=99.6, speedup_compile=0.96, speedup_eager=4.5),
        _result("softmax", "bfloat16", bytes=big, pct_ceiling=97.9, speedup_compile=2.3, speedup_eager=3.8),
        _result("softmax", "float16", bytes=big, pct_ceiling=50.0),  # fp16 is not covered by the memory targets
        _result("add_mul", "float32", bytes=2**20, pct_ceiling=40.0),  # too small to be covered
        _result("gemm", "float16", params={"M": 4096, "N": 4096, "K": 4096, "epilogue": "bias_relu", "p": 0.1},
                speedup_eager=1.327, speedup_compile=1.36),
        _result("gemm", "bfloat16", params={"M": 8192, "N": 8192, "K": 8192, "epilogue": "bias_relu", "p": 0.1},
                speedup_eager=1.156, speedup_compile=1.15),
        _result("gemm", "float16", params={"M": 1024, "N": 1024, "K": 1024, "epilogue": "bias_relu", "p": 0.0},
                seed_shape=True, triton_graph_us=6.4, eager_graph_us=11.6, speedup_eager=0.6),
        _result("attention", "bfloat16", params={"S": 4096, "D": 128, "causal": True}, status="fail"),
        # the seed target is about the GEMM seed shapes; a slower attention seed case is not covered by it
        _result("attention", "float16", params={"S": 2048, "D": 128, "causal": True}, seed_shape=True,
                triton_graph_us=110.0, eager_graph_us=90.0),
    ]
    rows = {r["id"]: r for r in targets.evaluate(results)}
    assert rows["mem-copy"]["status"] == "met" and len(rows["mem-copy"]["cases"]) == 2
    assert rows["mem-compile"]["status"] == "not met" and rows["mem-compile"]["min"] == 0.96
    assert rows["mem-eager"]["status"] == "met" and len(rows["mem-eager"]["cases"]) == 1  # softmax: one eager kernel
    assert rows["gemm-dropout"]["status"] == "not met"  # 8192^3 at 1.156 < 1.25
    assert [c["ok"] for c in rows["gemm-dropout"]["cases"]] == [True, False]
    assert rows["gemm-compile"]["status"] == "met"
    assert rows["seed-graph"]["status"] == "met"  # judged by graph replay, not the launch-bound event time
    assert len(rows["seed-graph"]["cases"]) == 1
    assert rows["attention"]["status"] == "not measured"  # a failed case has no ratio
    assert "gemm-plain" not in rows and "gemm-bias-relu" not in rows  # no case covered


def test_timed_report_json_carries_targets_and_cpu_report_does_not() -> None:
    from rocm_triton_doctor.smoke.runner import CaseResult, SmokeReport

    r = CaseResult("rmsnorm", "float32 65536x8192", "float32", "pass", bytes=4.3e9, pct_ceiling=99.0,
                   speedup_eager=4.4, speedup_compile=1.01)
    timed = SmokeReport("cuda", "GPU", "cuda:sm_90", "bench", {}, [r], {"copy_gbps": 4000.0, "matmul_tflops": {}}, {},
                        [], "2026-11-21T00:00:00Z", 1.0)
    assert [t["status"] for t in timed.to_dict()["targets"]] == ["met", "met", "met"]
    cpu = SmokeReport("cpu", "CPU", "interpreter", "quick", {}, [r], None, {}, [], "2026-11-21T00:00:00Z", 1.0)
    assert cpu.to_dict()["targets"] == []
    quick = SmokeReport("cuda", "GPU", "cuda:sm_90", "quick", {}, [r], {"copy_gbps": 4000.0, "matmul_tflops": {}}, {},
                        [], "2026-11-21T00:00:00Z", 1.0)
    assert quick.to_dict()["targets"] == []  # the targets are defined on the bench preset's cases


def test_timed_table_prints_the_targets() -> None:
    from rich.console import Console

    from rocm_triton_doctor.smoke import render
    from rocm_triton_doctor.smoke.runner import CaseResult, SmokeReport

    r = CaseResult("rmsnorm", "float32 65536x8192", "float32", "pass", bytes=4.3e9, pct_ceiling=99.0,
                   speedup_eager=4.4, speedup_compile=0.96, triton_ms={"median_ms": 1.0, "p20_ms": 1.0, "p80_ms": 1.0},
                   achieved=4150.0, achieved_unit="GB/s")
    report = SmokeReport("cuda", "GPU", "cuda:sm_90", "bench", {}, [r], {"copy_gbps": 4000.0, "matmul_tflops": {}}, {},
                         [], "2026-11-21T00:00:00Z", 1.0)
    console = Console(record=True, width=200)
    render.table(report, console)
    text = console.export_text()
    assert "performance targets" in text and "not met" in text and "0.96x" in text
