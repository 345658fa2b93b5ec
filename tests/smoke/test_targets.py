"""smoke/runner.py's launch-bound rule and smoke/targets.py's performance targets, without a GPU."""

from __future__ import annotations


def test_launch_bound_uses_the_roofline_time_not_the_noisy_median() -> None:
    from types import SimpleNamespace

    from rocm_triton_doctor.smoke.timing import launch_bound, roofline_us
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
