"""`smoke --preset sweep` / `--preset launch` without a GPU: the grid, what is skipped and why, the Liger column,
the grouped table and per-class summary, the Markdown converter, and the launch-config caches (issue #16 items 3-4)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from rocm_triton_doctor.kernels.policy import Target

H100 = Target("cuda", "sm_90", 32)
MI300 = Target("hip", "gfx942", 64)
ROOT = Path(__file__).resolve().parents[2]


def _sweep_cases() -> dict[str, list[Any]]:
    from rocm_triton_doctor import kernels
    from rocm_triton_doctor.smoke import sweep

    by = {m.name: m.cases("sweep", H100) for m in kernels.REGISTRY if m.name != "gemm"}
    by["gemm"] = sweep.gemm_cases(H100)
    return by


def test_the_sweep_grid_builds_by_class() -> None:
    from rocm_triton_doctor.smoke import sweep

    by = _sweep_cases()
    # rows: 11 widths x 3 row counts in bf16, 5 of them too big (skipped()), plus 5 shapes x (fp32, fp16), plus 4
    # odd widths
    bf16_fit = sum(sweep.fits((M, N), 2) is None for M in sweep.ROW_M for N in sweep.ROW_N)
    assert bf16_fit == 28
    for k in sweep.ROW_KERNELS:
        assert len(by[k]) == 28 + 10 + 4, k
        names = {c.name for c in by[k]}
        assert "bfloat16 1024x262144" in names and "float32 1024x152064" in names  # vocabulary rows, fp32 too
        assert "bfloat16 4096x50257" in names and "float16 8192x6163" in names  # rows off 16-byte boundaries
        assert "bfloat16 65536x65536" not in names
    assert len(by["add_mul"]) == len(by["bias_gelu_dropout_residual"]) == 11  # 1 MiB..1 GiB x bf16/fp32 + odd
    assert len(by["gemm"]) == len(sweep.gemm_shapes()) == 48
    assert len(by["attention"]) == 61
    gemm_names = {c.name for c in by["gemm"]}
    assert {"bfloat16 1x4096x14336 none", "float16 1000x1000x1000 none", "bfloat16 4097x4097x4097 none",
            "bfloat16 8192x4096x11008 none"} <= gemm_names
    attn = {c.name for c in by["attention"]}
    assert {"bfloat16 B=4 H=32 S=1000 D=64 causal", "bfloat16 B=4 H=32 S=4096 D=128 GQA 32/8",
            "bfloat16 B=4 H=32 S=4097 D=256", "bfloat16 B=1 H=4 S=16384 D=128 causal"} <= attn
    assert len(by["linear_cross_entropy"]) == 3  # LM heads: vocabularies 32000, 128256, 152064
    assert sum(len(v) for v in by.values()) == 4 * 42 + 22 + 48 + 61 + 3


def test_attention_takes_its_sweep_grid_through_its_own_cases() -> None:
    from rocm_triton_doctor import kernels
    from rocm_triton_doctor.smoke import runner

    cases = runner._cases(kernels, "sweep", H100, ("attention",), torch.device("cpu"))
    assert {c.kernel for c in cases} == {"attention"} and len(cases) == 61
    dims = {c.params["D"] for c in cases}
    assert dims == {64, 80, 96, 128, 256}
    # GQA 32/8 at S 1024/4096/8192, causal or not; decode (S_q 1) against 4k/32k keys at batch 1 and 8; 128 against
    # 8k; long query blocks against a short key range (MQA, GQA causal)
    assert sum(c.params["H_kv"] != c.params["H"] for c in cases) == 13
    assert {(c.params["S"], c.params.get("S_k")) for c in cases if c.params.get("S_k", c.params["S"]) != c.params["S"]} == {
        (1, 4096), (1, 32768), (128, 8192), (4455, 89), (8192, 100)}


def test_rows_that_would_not_fit_are_skipped_with_a_reason() -> None:
    from rocm_triton_doctor.smoke import sweep

    assert "GiB per tensor" in (sweep.fits((65536, 65536), 2) or "")
    assert "fp64 reference" in (sweep.fits((8192, 152064), 2) or "")
    assert sweep.fits((65536, 16384), 2) is None
    notes = sweep.skipped()
    assert len(notes) == 5 and all(": " in n for n in notes)
    assert any("65536x262144" in n and "32.0 GiB per tensor" in n for n in notes)
    for cases in _sweep_cases().values():  # nothing built is over the limits
        for c in cases:
            assert c.bytes < 3 * sweep.MAX_TENSOR_BYTES + (64 << 20), c.id


def test_the_runner_takes_gemm_and_attention_from_the_sweep_module_and_interleaves() -> None:
    from rocm_triton_doctor import kernels
    from rocm_triton_doctor.smoke import runner, sweep

    cases = runner._cases(kernels, "sweep", H100, ("gemm", "rmsnorm"), torch.device("cpu"))
    assert [c.kernel for c in cases[:4]] == ["gemm", "rmsnorm", "gemm", "rmsnorm"]  # gemm.cases("sweep"), registry order
    assert len(cases) == 48 + 42
    order = sweep.interleave([c for c in cases if c.kernel == "rmsnorm"][:2] + [c for c in cases if c.kernel == "gemm"][:1])
    assert [c.kernel for c in order] == ["rmsnorm", "gemm", "rmsnorm"]


def test_liger_column_says_not_installed_when_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from rocm_triton_doctor.smoke import baselines

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "liger_kernel" else real(name, *a))
    assert baselines.liger_fn("rmsnorm") == (None, "not installed")
    assert baselines.liger_fn("gemm") == (None, "no op")


def test_liger_linear_cross_entropy_does_our_cases_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Liger's fused LCE is called for the loss and both gradients, with an fp32 ∂W accumulator (as ours has): a
    forward-only or 16-bit-accumulating call would be a cheaper, different computation."""
    import sys
    import types

    import torch

    from rocm_triton_doctor.smoke import baselines

    seen: dict[str, Any] = {}
    ops = types.ModuleType("liger_kernel.ops")
    ops.fused_linear_cross_entropy_forward = lambda *a, **k: seen.update(args=a, kw=k)  # type: ignore[attr-defined]
    pkg = types.ModuleType("liger_kernel")
    pkg.ops = ops  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "liger_kernel", pkg)
    monkeypatch.setitem(sys.modules, "liger_kernel.ops", ops)
    monkeypatch.setattr(baselines, "liger_status", lambda: None)
    fn, why = baselines.liger_fn("linear_cross_entropy")
    assert fn is not None and why == ""
    fn({"h": "H", "w": "W", "y": "Y"})
    assert seen["args"] == ("H", "W", "Y")
    assert seen["kw"] == {"reduction": "sum", "accum_dtype": torch.float32, "compute_gradients": True,
                          "weight_requires_grad": True}


def _report(preset: str = "sweep") -> Any:
    from rocm_triton_doctor.smoke.runner import CaseResult, SmokeReport

    def r(kernel: str, case: str, ms: float, **kw: Any) -> CaseResult:
        return CaseResult(kernel, case, "bfloat16", kw.pop("status", "pass"), triton_ms={"median_ms": ms, "p20_ms": ms,
                                                                                          "p80_ms": ms}, **kw)

    results = [
        r("rmsnorm", "bfloat16 65536x4096", 0.30, speedup_eager=3.0, speedup_compile=1.1, speedup_liger=0.9,
          vs_best=0.9, pct_ceiling=80.0, bytes=1.1e9),
        r("rmsnorm", "bfloat16 1024x128", 0.004, speedup_eager=1.5, vs_best=1.2, pct_ceiling=10.0, bytes=5e5,
          liger="not installed"),
        r("gemm", "bfloat16 1x4096x4096 none", 0.02, speedup_eager=0.6, pct_ceiling=1.0,
          params={"M": 1, "N": 4096, "K": 4096, "epilogue": "none", "p": 0.0}),
        r("gemm", "bfloat16 2048x4096x11008 bias_relu", 0.3, speedup_eager=1.2, pct_ceiling=70.0,
          params={"M": 2048, "N": 11008, "K": 4096, "epilogue": "bias_relu", "p": 0.0}),
        r("attention", "bfloat16 B=4 H=32 S=1000 D=128", 0.2, speedup_eager=0.5, pct_ceiling=40.0,
          params={"B": 4, "H": 32, "H_kv": 32, "S": 1000, "D": 128, "causal": False}),
        r("attention", "bfloat16 B=4 H=32 S=128 D=64", 0.01, speedup_eager=0.5,
          params={"B": 4, "H": 32, "H_kv": 32, "S": 128, "D": 64, "causal": False}),
    ]
    if preset == "launch":
        results = [CaseResult("rmsnorm", "bfloat16 16x4096", "bfloat16", "pass", launch_us={"triton": 12.0, "eager": 8.0})]
    return SmokeReport("cuda", "NVIDIA H100 80GB HBM3", "cuda:sm_90", preset, {"torch": "2.11", "triton": "3.6"},
                       results, {"copy_gbps": 3000.0, "matmul_tflops": {"bfloat16": 700.0}}, {},
                       ["not in the sweep: rmsnorm bfloat16 65536x262144: 32.0 GiB per tensor (over 4 GiB)"],
                       "2026-11-23T00:00:00Z", 12.0)


def test_targets_each_row_misses() -> None:
    from rocm_triton_doctor.smoke import sweep_render as sr

    rows = {r.case: r.to_dict() for r in _report().results}
    assert sr.misses(rows["bfloat16 65536x4096"]) == ["<0.95x best", "<85% copy"]
    assert sr.misses(rows["bfloat16 1024x128"]) == []  # small: only the ratio counts, and 1.2x meets it
    assert sr.misses(rows["bfloat16 1x4096x4096 none"]) == ["<0.95x cuBLAS"]
    assert sr.misses(rows["bfloat16 2048x4096x11008 bias_relu"]) == []  # fused: >= 1.1x eager
    assert sr.misses(rows["bfloat16 B=4 H=32 S=1000 D=128"]) == ["<0.9x SDPA"]
    assert sr.misses(rows["bfloat16 B=4 H=32 S=128 D=64"]) == []  # S < 1000: no attention target
    classes = {s["class"]: s for s in sr.summary(list(rows.values()))}
    assert set(classes) == {"rmsnorm", "gemm decode (M<=16)", "gemm fused epilogue", "attention"}
    assert classes["rmsnorm"]["worst_ratio"] == 0.9 and classes["rmsnorm"]["worst_case"] == "bfloat16 65536x4096"
    assert classes["gemm fused epilogue"]["against"] == "eager" and classes["attention"]["against"] == "SDPA"
    assert classes["attention"]["missed"] == 1


def test_table_and_per_class_summary_render() -> None:
    from rich.console import Console

    from rocm_triton_doctor.smoke import render

    con = Console(record=True, width=220, file=io.StringIO())
    render.table(_report(), con)
    text = con.export_text()
    assert "rmsnorm — 2 rows" in text and "gemm decode (M<=16) — 1 rows" in text
    assert "not installed" in text and "<85% copy" in text
    assert text.index("sweep summary by class") > text.index("attention — 2 rows")  # the summary comes last
    con = Console(record=True, width=220, file=io.StringIO())
    render.table(_report("launch"), con)
    text = con.export_text()
    assert "host µs per call" in text and "1.50" in text


def test_markdown_converter_on_a_small_sweep(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import smoke_markdown
    finally:
        sys.path.pop(0)
    now, before = tmp_path / "sweep.json", tmp_path / "before.json"
    now.write_text(json.dumps(_report().to_dict()))
    old = _report().to_dict()
    old["results"][0]["vs_best"] = 0.5
    before.write_text(json.dumps(old))
    md = smoke_markdown.main([str(now), "--before", str(before)])
    assert "| rmsnorm | 2 | best | bfloat16 65536x4096 | 0.90× |" in md
    assert "bfloat16 65536x4096 0.50× |" in md  # the worst row before
    assert "**<0.95x best, <85% copy**" in md and "**gemm decode (M<=16)**" in md
    assert "| bfloat16 1x4096x4096 none | pass | 20.0 | — | — | — | 0.60× |" in md  # cuBLAS column for plain GEMM
    assert "- not in the sweep: rmsnorm" in md
    (tmp_path / "launch.json").write_text(json.dumps(_report("launch").to_dict()))
    assert "| rmsnorm | bfloat16 16x4096 | 12.0 | 8.0 | 1.50× |" in smoke_markdown.main([str(tmp_path / "launch.json")])


def test_launch_configs_are_cached_per_shape_class_dtype_and_device() -> None:
    from rocm_triton_doctor.kernels import policy

    policy._row_config.cache_clear()  # type: ignore[attr-defined]
    a = policy.row_config(H100, 4096, 2, 8192)
    b = policy.row_config(H100, 4096, 2, 100_000)  # another token count, same class (>= 64 rows)
    assert a == b and a is not b  # each caller gets its own copy (launchers add keys)
    a["LOOPED"] = True
    assert "LOOPED" not in policy.row_config(H100, 4096, 2, 8192)
    info = policy._row_config.cache_info()  # type: ignore[attr-defined]
    assert (info.hits, info.misses) == (2, 1)
    policy.row_config(H100, 4096, 4, 8192)  # another dtype size: another entry
    policy.row_config(MI300, 4096, 2, 8192)  # another device kind: another entry
    policy.row_config(H100, 4096, 2, 3)  # a narrow row count is its own class
    assert policy._row_config.cache_info().misses == 4  # type: ignore[attr-defined]
    assert policy.row_config(H100, 128, 2, 3)["ROWS"] == 4 and policy.row_config(H100, 128, 2, 10**6)["ROWS"] == 16
    g1 = policy.gemm_config(H100, 1024, 1024, 1024, 2)
    assert g1 == policy.gemm_config(H100, 1024, 1024, 1024, 2)
    assert policy.gemm_config(H100, 1024, 1024, 1024, 4) != g1  # fp32 tiles differ
    assert policy.gemm_config(MI300, 1024, 1024, 1024, 2) != g1


def test_host_cdiv_and_the_fast_alias_extent() -> None:
    import triton

    from rocm_triton_doctor.kernels import base

    for a, b in ((0, 4), (1, 4), (4, 4), (5, 4), (1 << 40, 3)):
        assert base.cdiv(a, b) == triton.cdiv(a, b)
    x = torch.empty(8, 16)
    assert base._extent(x) == (x.data_ptr(), x.data_ptr() + 8 * 16 * 4)
    t = x.t()  # not contiguous: the loop, same range
    assert base._extent(t) == base._extent(x)
    with pytest.raises(ValueError, match="overlaps"):
        base.check_alias("k", x[1:], {"y": x[:-1]})
    base.check_alias("k", x[4:], {"y": x[:4]})  # adjacent, not overlapping


def test_max_seconds_stops_starting_rows_and_says_so() -> None:
    from rocm_triton_doctor.smoke import runner

    rep = runner.run_smoke("cpu", "sweep", ("add_mul",), max_seconds=0.0)
    assert rep.results == []
    assert any(n.startswith("--max-seconds 0: stopped starting rows after 0 of 4") for n in rep.notes)


def test_cli_accepts_the_sweep_and_launch_presets_and_max_seconds() -> None:
    import subprocess

    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "smoke", "--device", "cpu", "--preset", "sweep",
                          "--only", "softmax", "--max-seconds", "600", "--json"], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    data = json.loads(res.stdout)
    assert res.returncode == data["exit_code"] == 0 and data["preset"] == "sweep"
    assert [r["kernel"] for r in data["results"]] == ["softmax"] * 3  # interpreter: the module's small cases
    assert any(n.startswith("not in the sweep: ") for n in data["notes"])
    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "smoke", "--device", "cpu", "--preset", "launch",
                          "--only", "softmax", "--max-seconds", "0.5"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and "0.5" in res.stderr  # --max-seconds is at least 1


def test_sweep_timing_fills_every_column_with_a_fake_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU-only timing path (runner._time_case with sweep=True), driven by a fake do_bench: each baseline's
    median is what the fake says, the ratios follow, and the sweep's shorter warm-up/reps are the ones asked for."""
    from types import SimpleNamespace

    from rocm_triton_doctor.smoke import baselines, runner
    from rocm_triton_doctor.smoke.timing import Ceilings, Timing

    asked: list[tuple[int, int]] = []
    medians = iter([0.5, 2.0, 0.8])  # ours, eager, Liger (ms)

    def bench(fn: Any, rep_ms: int = 100, warmup_ms: int = 25) -> Timing:
        fn()
        asked.append((warmup_ms, rep_ms))
        m = next(medians)
        return Timing(m, m, m)

    from rocm_triton_doctor.smoke import timing as real

    timing = SimpleNamespace(bench=bench, bench_graph=lambda fn: None, roofline_us=real.roofline_us,
                             launch_bound=real.launch_bound, compute_bound=real.compute_bound)
    monkeypatch.setattr(baselines, "liger_fn", lambda kernel: ((lambda x: x["x"] * 2), ""))
    case = SimpleNamespace(kernel="rmsnorm", dtype=torch.float32, seed_shape=False, graphable=True, bytes=float(256 << 20), flops=0.0,
                           out_shape=lambda x: (4,), run=lambda x, out: x["x"] + 1, eager=lambda x: x["x"] + 1)
    r = runner.CaseResult("rmsnorm", "c", "float32", "pass")
    runner._time_case(case, {"x": torch.ones(4)}, r, False, Ceilings(1000.0, {}), torch, timing, sweep=True)
    assert asked == [runner.SWEEP_REP_MS] * 3
    assert (r.speedup_eager, r.speedup_liger, r.vs_best, r.liger) == (4.0, 1.6, 1.6, "")
    assert r.pct_ceiling == round(100 * (256 << 20) / 0.5e-3 / 1e9 / 1000.0, 1)
    monkeypatch.setattr(baselines, "liger_fn", lambda kernel: (None, "not installed"))
    medians = iter([1.0, 0.9])
    r = runner.CaseResult("rmsnorm", "c", "float32", "pass")
    runner._time_case(case, {"x": torch.ones(4)}, r, False, Ceilings(1000.0, {}), torch, timing, sweep=True)
    assert (r.liger, r.liger_ms, r.vs_best) == ("not installed", None, 0.9)
