"""policy.misaligned_depth: 32-deep K blocks for 4-warp GEMM tiles whose operands are read without 16-byte vectors
(session 14), and gemm()'s spill check after it (policy.spill_checked, session 15). The rules' bounds, their effect on
the plan, results computed with such tiles, and — where Triton's ptxas is at hand — the register spills they remove,
compiled for sm_90 from the launch gemm() plans."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import gemm, policy, policy_misaligned
from rocm_triton_doctor.kernels.aligned_copy import misaligned
from tests.kernels.test_gemm import assert_matches, operand

H100 = policy.target_from_name("sm_90")
MI300 = policy.target_from_name("gfx942")


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()
    yield
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _cfg(M: int, K: int, N: int, aligned: bool, t: policy.Target = H100, b_nmajor: bool = True,
         elem: int = 2) -> dict[str, Any]:
    return policy.gemm_config(t, M, N, K, elem, cus=132, b_nmajor=b_nmajor, aligned=aligned)


def _without_rule(monkeypatch: pytest.MonkeyPatch, *args: Any, **kw: Any) -> dict[str, Any]:
    monkeypatch.setattr(policy_misaligned, "MISALIGNED_MAX_LOADS_PER_THREAD", 1 << 30)
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    cfg = _cfg(*args, **kw)
    monkeypatch.undo()
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    return cfg


# Rows of benchmarks/gemm_ab_probe.py --ab s14 whose 64-row, 4-warp tiles spilled (ptxas, sm_90) and ran faster
# 32 deep (H100, × eager): 613x432x78 (the split kernel 35.7 -> 5-ish us), 114x325x94, 48x481x70 0.32 -> 1.24,
# 277x473x121 B^T 0.46 -> 0.99, 76x133x8927 0.52 -> 1.09 (session 27's small tiles take that one now:
# test_misaligned_products_take_small_tiles).
@pytest.mark.parametrize(("M", "K", "N", "b_nmajor"), [(613, 432, 78, True), (114, 325, 94, True), (48, 481, 70, True),
                                                        (277, 473, 121, False)])
def test_misaligned_4_warp_tiles_take_32_deep_k_blocks(monkeypatch: pytest.MonkeyPatch, M: int, K: int, N: int,
                                                       b_nmajor: bool) -> None:
    cfg = _cfg(M, K, N, False, b_nmajor=b_nmajor)
    before = _without_rule(monkeypatch, M, K, N, False, b_nmajor=b_nmajor)
    assert before["num_warps"] == 4 and before["BLOCK_K"] == 64
    assert cfg == {**before, "BLOCK_K": 32}  # tiles, split and stages as they were; only the depth changes
    assert (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] <= policy.MISALIGNED_MAX_LOADS_PER_THREAD * 128


@pytest.mark.parametrize(("M", "K", "N", "aligned", "t", "why"), [
    (613, 432, 80, True, H100, "aligned operands load 16-byte vectors"),
    (3921, 7231, 228, False, H100, "K > 4096: 0.82 -> 0.57x eager 32 deep (the A/B's one such loss)"),
    (11, 15337, 27607, False, H100, "decode tiles beyond K = 4096"),
    (5000, 100, 4099, False, H100, "8-warp tiles: the spill check decides for them (gemm._spilled_bytes)"),
    (613, 432, 78, False, MI300, "AMD's tiles come from its own compile-only audit"),
])
def test_misaligned_depth_leaves_other_tiles_alone(monkeypatch: pytest.MonkeyPatch, M: int, K: int, N: int,
                                                    aligned: bool, t: policy.Target, why: str) -> None:
    assert _cfg(M, K, N, aligned, t) == _without_rule(monkeypatch, M, K, N, aligned, t), why


# Session 27 (H200, graph replay × eager; benchmarks/gemm_misaligned_probe.py, docs/measurements/2026-11-29-h200-s27-
# gemm-final.json): rows the small tiles took, the policy before -> after.
@pytest.mark.parametrize(("M", "K", "N", "elem", "b_nmajor"), [
    (5341, 111, 71, 4, False),    # 0.59 -> 1.05 (it ran on the GEMV: past 96 rows only small outputs stay there)
    (428, 157, 91, 4, False),     # 0.81 -> 1.21
    (47, 694, 216, 4, True),      # 0.80 -> 1.01 (policy_fp32.fp32_nmajor_config's rows up to K = 2048)
    (2637, 1697, 20, 4, False),   # 0.43 -> 0.57
    (8192, 4, 2047, 4, True),     # 0.63 -> 1.08
    (134, 31, 19218, 2, True),    # 0.77 -> 1.33: K of 32 or less at any grid
    (91, 31, 24363, 2, False),    # 0.98 -> 1.09
    (76, 133, 8927, 2, True),     # 1.07 -> 1.14
    (3426, 93, 673, 2, True),     # 0.88 -> 0.95
])
def test_misaligned_products_take_small_tiles(M: int, K: int, N: int, elem: int, b_nmajor: bool) -> None:
    cfg = policy.gemm_config(H100, M, N, K, elem, cus=132, b_nmajor=b_nmajor, tc=elem == 4, aligned=False)
    split = policy.gemm_split_latency_bound(M, N, K, 32, 64, 16, 132, 132)
    assert cfg == {**policy.MISALIGNED_SMALL_TILE, "SPLIT_K": split}
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["num_warps"]) == (32, 64, 16, 4)
    assert policy.gemm_config(H100, M, N, K, elem, cus=132, b_nmajor=b_nmajor, tc=elem == 4, aligned=True) != cfg


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_small_tiles_keep_dropout_right_through_the_split(dtype: torch.dtype) -> None:
    # 96x93x130 misaligned: the small tiles with 4 K splits; dropout is applied once, after the splits are summed
    M, K, N, p = 96, 93, 130, 0.25
    cfg = dict(policy.gemm_config(H100, M, N, K, dtype.itemsize, cus=132, tc=dtype.itemsize == 4, aligned=False))
    assert cfg == {**policy.MISALIGNED_SMALL_TILE, "SPLIT_K": 4}
    g = torch.Generator().manual_seed(0)
    a, b = operand(M, K, "", dtype, g), operand(K, N, "", dtype, g, scale=K**-0.5)
    bias = operand(1, N, "", dtype, g)[0]
    out = gemm.gemm(a, b, bias, "bias_relu", p, 1234, config=cfg).double()
    ref = gemm.reference(a.double(), b.double(), bias.double(), "bias_relu")
    kept = out != 0
    assert_matches(out[kept], ref[kept] / (1 - p), dtype)
    positive = ref > 0
    dropped = (~kept & positive).sum().item() / positive.sum().item()
    assert abs(dropped - p) < 0.05, dropped


@pytest.mark.parametrize(("M", "K", "N", "elem", "why"), [
    (16, 694, 216, 4, "16 fp32 rows or fewer: the decode tiles and the GEMV"),
    (64, 133, 8927, 2, "64 16-bit rows or fewer: the decode tiles"),
    (2542, 2671, 1, 4, "16 columns or fewer: the skinny tiles (0.31 -> 0.21x on the small ones)"),
    (17, 4096, 11007, 4, "K past 2048: 1.33 -> 0.78x with one split on the small tiles"),
    (103, 3439, 87, 2, "16-bit skinny with K past 32 (13151x8035x19 bias_gelu 0.66 -> 0.45x)"),
    (944, 71, 4023, 2, "more than 12 small tiles an SM at K past 32: the large tiles (0.94 against 0.79x)"),
    (4916, 78, 731, 4, "likewise in fp32 (1.56 against 1.29x)"),
])
def test_small_tiles_leave_other_products_alone(M: int, K: int, N: int, elem: int, why: str) -> None:
    assert not policy.misaligned_small_tiles(H100, M, N, K, elem, 132), why
    cfg = policy.gemm_config(H100, M, N, K, elem, cus=132, b_nmajor=True, tc=elem == 4, aligned=False)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]) != (32, 64, 16) or cfg["num_stages"] != 3, why


def test_small_tiles_are_nvidia_only_and_switchable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert policy.misaligned_small_tiles(H100, 428, 91, 157, 4, 132)
    for t in (MI300, policy.target_from_name("gfx1100"), policy.Target("interpreter", "cpu", 32)):
        assert not policy.misaligned_small_tiles(t, 428, 91, 157, 4, 132)
    monkeypatch.setattr(policy_misaligned, "MISALIGNED_SMALL_TILES", False)
    assert not policy.misaligned_small_tiles(H100, 428, 91, 157, 4, 132)
    # the TMA kernel's operands are aligned by construction: the rule never sees it
    assert policy.gemm_config(H100, 428, 91, 157, 2, tma=True, cus=132, aligned=False)["BLOCK_K"] == 64


def test_fp32_tensor_core_tiles_take_16_deep_k_blocks_at_a_short_misaligned_k() -> None:
    # Large outputs the small tiles leave (fp32 6921x33x1485 bias B^T: 64x64x32 0.48x eager, 16 deep 0.77x; …-s27-gemm-
    # kshort-s6.json); K past FP32_MISALIGNED_SHORT_K keeps 32.
    cfg = policy.gemm_config(H100, 6921, 1485, 33, 4, cus=132, b_nmajor=False, tc=True, aligned=False)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]) == (64, 64, 16)
    assert policy.gemm_config(H100, 6921, 1485, 129, 4, cus=132, b_nmajor=False, tc=True, aligned=False)["BLOCK_K"] == 32
    assert policy.gemm_config(H100, 6921, 1485, 33, 4, cus=132, b_nmajor=False, tc=True, aligned=True)["BLOCK_K"] == 32


def test_misaligned_depth_bounds() -> None:
    tile = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128, "num_warps": 4}
    assert policy.misaligned_depth(H100, tile, 4096)["BLOCK_K"] == 32  # halved twice: (64 + 128)·32 = 48·128
    assert policy.misaligned_depth(H100, {**tile, "BLOCK_N": 32}, 4096)["BLOCK_K"] == 64  # (64 + 32)·64 = 48·128
    assert policy.misaligned_depth(H100, {**tile, "BLOCK_K": 32, "BLOCK_N": 256}, 64)["BLOCK_K"] == 32  # never below 32
    assert policy.misaligned_depth(H100, tile, 4097) is tile
    assert policy.misaligned_depth(policy.Target("interpreter", "cpu", 32), tile, 64) is tile
    assert policy.gemm_config(H100, 613, 78, 432, 2, tma=True, aligned=False)["BLOCK_K"] == 64  # descriptors: no rule


@pytest.mark.parametrize("split", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_32_deep_tiles_compute_right_on_misaligned_operands(split: int, dtype: torch.dtype) -> None:
    # An odd K (A's rows misaligned) and an odd N (B's rows misaligned); K = 3·32 + 13 leaves a partial last block.
    M, K, N = 70, 109, 45
    g = torch.Generator().manual_seed(split)
    a, b = operand(M, K, "", dtype, g), operand(K, N, "", dtype, g, scale=K**-0.5)
    bias = operand(1, N, "", dtype, g)[0]
    cfg = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3, "SPLIT_K": split}
    out = gemm.gemm(a, b, bias, "bias_relu", config=cfg)
    assert_matches(out, gemm.reference(a.double(), b.double(), bias.double(), "bias_relu"), dtype)


def _ptxas() -> str | None:
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        try:
            tool = get_ptxas(90)
        except TypeError:
            tool = get_ptxas()
        path = str(getattr(tool, "path", tool))
        return path if Path(path).exists() else None
    except Exception:  # noqa: BLE001 - no NVIDIA backend: the compile test skips
        return None


_COMPILE = r"""
import inspect, json, os, re, subprocess, sys, tempfile
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from rocm_triton_doctor.kernels.gemm_kernels import gemm_kernel
job = json.loads(sys.argv[1])
params = list(inspect.signature(gemm_kernel.fn).parameters)
values = [None] * 4 + job["ints"] + [0, 0, 1.0]  # pointers, ints, seed, threshold, scale
const, sig, attrs = dict(job["kw"]), {}, {}
opts = {k: const.pop(k) for k in ("num_warps", "num_stages")}
for i, (name, v) in enumerate(zip(params, values)):
    if i < 4:
        sig[name] = "*fp32" if job["split"] > 1 and name == "c_ptr" else "*fp16"
        attrs[(i,)] = [["tt.divisibility", 16]]
    elif isinstance(v, float):
        sig[name] = "fp32"
    elif v == 1:
        const[name] = 1  # Triton specialises an int argument equal to 1
    else:
        sig[name] = "i32"
        if v % 16 == 0:
            attrs[(i,)] = [["tt.divisibility", 16]]
full = {p: sig.get(p, "constexpr") for p in params if p in sig or p in const}
k = triton.compile(ASTSource(gemm_kernel, full, constexprs=const, attrs=attrs), target=GPUTarget("cuda", 90, 32),
                   options=opts)
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "k.ptx"), "w").write(k.asm["ptx"])
    res = subprocess.run([job["ptxas"], "-v", "--gpu-name=sm_90a", os.path.join(d, "k.ptx"), "-o",
                          os.path.join(d, "k.cubin")], capture_output=True, text=True, timeout=120)
print("SPILLS", sum(int(s) for s in re.findall(r"(\d+) bytes spill stores", res.stdout + res.stderr)))
"""


def _ptxas_spills(part: Any) -> int:
    """Spilled bytes of part's gemm_kernel launch (its constexprs and integer arguments: ints equal to 1 specialised,
    those divisible by 16 marked so, as a launch does), compiled for sm_90 in a child process (the tests run Triton's
    interpreter) and counted by ptxas."""
    job = {"ints": list(part.ints), "kw": part.kw, "split": part.split, "ptxas": _ptxas()}
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-c", _COMPILE, json.dumps(job)], capture_output=True, text=True,
                         timeout=300, env=env, cwd=Path(__file__).resolve().parents[2])
    found = re.search(r"SPILLS (\d+)", res.stdout)
    assert found, res.stdout[-2000:] + res.stderr[-2000:]
    return int(found.group(1))


def _plan(monkeypatch: pytest.MonkeyPatch, M: int, K: int, N: int, split: int | None = None,
          b_t: bool = False) -> Any:
    """gemm()'s plan on an H100 for a misaligned fp16 M×K @ K×N (b_t: B the transpose of an (N, K) tensor), SPLIT_K
    forced to `split` where given."""
    monkeypatch.setattr(policy, "target_for_device", lambda device: H100)
    monkeypatch.setattr(gemm, "_cus", lambda dev: 132)
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")
    if split is not None:
        orig = policy.gemm_config
        monkeypatch.setattr(policy, "gemm_config", lambda *a, **k: {**orig(*a, **k), "SPLIT_K": split})
    a = torch.empty(M, K, dtype=torch.float16)
    b = torch.empty(N, K, dtype=torch.float16).t() if b_t else torch.empty(K, N, dtype=torch.float16)
    plan = gemm._decide(a, b, torch.empty(M, N, dtype=torch.float16), None, "none", 0.0, 0, "auto", None, "auto",
                        torch.device("cpu"))
    assert plan is not None and not plan.copy_a and not plan.copy_b
    return plan


def _planned_spills(monkeypatch: pytest.MonkeyPatch, M: int, K: int, N: int, split: int) -> tuple[int, int]:
    """(spilled bytes, BLOCK_K) of the main kernel gemm() plans for a misaligned fp16 M×K @ K×N with SPLIT_K forced."""
    part = _plan(monkeypatch, M, K, N, split).parts[0]
    return _ptxas_spills(part), part.kw["BLOCK_K"]


@pytest.mark.skipif(_ptxas() is None, reason="needs Triton's NVIDIA backend with ptxas")
@pytest.mark.parametrize(("M", "K", "N"), [(613, 432, 78), (114, 325, 94)])
def test_the_planned_split_kernel_no_longer_spills_on_sm_90(monkeypatch: pytest.MonkeyPatch, M: int, K: int,
                                                           N: int) -> None:
    # Before the rule (BLOCK_K 64): 613x432x78 split 2 spilled 1,088-1,092 bytes, 114x325x94 2,264-2,396 (Triton
    # 3.6 / 3.9), and ran 2-7x slower than unsplit on an H100.
    assert _planned_spills(monkeypatch, M, K, N, 2) == (0, 32)


@pytest.mark.skipif(_ptxas() is None, reason="needs Triton's NVIDIA backend with ptxas")
@pytest.mark.parametrize(("M", "K", "N", "b_t"), [(3426, 93, 673, False), (91, 31, 24363, True), (76, 133, 8927, False)])
def test_the_small_tiles_compile_spill_free_on_sm_90(monkeypatch: pytest.MonkeyPatch, M: int, K: int, N: int,
                                                      b_t: bool) -> None:
    # session 27's tiles for misaligned products (policy.misaligned_small_tiles), as planned: split or not
    part = _plan(monkeypatch, M, K, N, b_t=b_t).parts[0]
    assert (part.kw["BLOCK_M"], part.kw["BLOCK_N"], part.kw["BLOCK_K"], part.kw["num_warps"]) == (32, 64, 16, 4)
    assert _ptxas_spills(part) == 0


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # CI time: 20 took ~30 s
@given(M=st.integers(1, 200), N=st.integers(1, 160), K=st.integers(1, 300),
       dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]), lb=st.sampled_from(["", "t"]),
       epilogue=st.sampled_from(["none", "bias_relu"]), seed=st.integers(0, 2**31 - 1))
def test_the_h100_policy_tiles_compute_right(M: int, N: int, K: int, dtype: torch.dtype, lb: str, epilogue: str,
                                             seed: int) -> None:
    """The tiles, depth and K split the NVIDIA policy picks for these operands (misaligned_depth and session 27's
    small tiles included; fp32 as on tensor cores), run in the interpreter: what the GPU runs, but for the compiled
    code's own bugs."""
    g = torch.Generator().manual_seed(seed)
    a, b = operand(M, K, "", dtype, g), operand(K, N, lb, dtype, g, scale=K**-0.5)
    bias = None if epilogue == "none" else operand(1, N, "", dtype, g)[0]
    aligned = not (misaligned(a) or misaligned(b))
    cfg = dict(policy.gemm_config(H100, M, N, K, dtype.itemsize, cus=132, b_nmajor=lb == "", tc=dtype.itemsize == 4,
                                  aligned=aligned))
    out = gemm.gemm(a, b, bias, epilogue, config=cfg)
    assert_matches(out, gemm.reference(a.double(), b.double(), None if bias is None else bias.double(), epilogue), dtype)


def _fake_spills(monkeypatch: pytest.MonkeyPatch, by_depth: dict[int, int]) -> list[int]:
    """gemm._spilled_bytes answering by BLOCK_K; returns the depths it was asked about."""
    asked: list[int] = []

    def fake(part: Any, *args: Any) -> int:
        asked.append(part.kw["BLOCK_K"])
        return by_depth.get(part.kw["BLOCK_K"], 0)
    monkeypatch.setattr(gemm, "_spilled_bytes", fake)
    return asked


def _no_small_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session 27's small tiles off: the spill check's own tests run on the 8-warp tiles their shapes took before
    (the small tiles take 3426x93x673 and 91x31x24363 now, 16 deep: nothing there to halve)."""
    monkeypatch.setattr(policy_misaligned, "MISALIGNED_SMALL_TILES", False)
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]


def test_gemm_halves_block_k_while_the_compiled_kernel_spills(monkeypatch: pytest.MonkeyPatch) -> None:
    # 3426x93x673 misaligned (K and N odd): an 8-warp 128x128 tile 64 deep, which session 14's load count leaves alone.
    _no_small_tiles(monkeypatch)
    asked = _fake_spills(monkeypatch, {64: 600, 32: 0})
    part = _plan(monkeypatch, 3426, 93, 673).parts[0]
    assert (part.kw["num_warps"], part.kw["BLOCK_K"], asked) == (8, 32, [64])  # 32 deep is the floor: not asked
    # the K-loop flag follows the new depth
    assert part.kw["EVEN_K"] is False and _plan(monkeypatch, 3426, 96, 673).parts[0].kw["EVEN_K"] is True
    gemm.clear_plans()
    asked = _fake_spills(monkeypatch, {64: policy.MISALIGNED_SPILL_LIMIT})  # at the limit: kept (3426x93x673 B^T)
    assert _plan(monkeypatch, 3426, 93, 673).parts[0].kw["BLOCK_K"] == 64 and asked == [64]
    gemm.clear_plans()
    asked = _fake_spills(monkeypatch, {64: 10_000, 32: 10_000})  # never below 32, however it spills
    assert _plan(monkeypatch, 3426, 93, 673).parts[0].kw["BLOCK_K"] == 32 and asked == [64]


def test_the_spill_check_asks_only_for_uncopied_misaligned_nvidia_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _fake_spills(monkeypatch, {64: 600})
    monkeypatch.setattr(policy, "target_for_device", lambda device: H100)
    monkeypatch.setattr(gemm, "_cus", lambda dev: 132)
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")
    dev = torch.device("cpu")

    def plan(M: int, K: int, N: int, config: dict[str, Any] | None = None) -> Any:
        a, b = torch.empty(M, K, dtype=torch.float16), torch.empty(K, N, dtype=torch.float16)
        return gemm._decide(a, b, torch.empty(M, N, dtype=torch.float16), None, "none", 0.0, 0, "auto", config,
                            "auto", dev)
    plan(3426, 96, 672)  # aligned: 16-byte loads
    plan(3426, 93, 673, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 2})  # a user's
    monkeypatch.setattr(policy_misaligned, "SPILL_CHECK", False)
    plan(3426, 93, 673)
    monkeypatch.setattr(policy_misaligned, "SPILL_CHECK", True)
    monkeypatch.setattr(policy, "target_for_device", lambda device: MI300)  # AMD: its audit's tiles
    plan(3426, 93, 673)
    assert asked == []
    assert not policy.spill_checked(policy.Target("interpreter", "cpu", 32), 64, True)


def test_a_failed_spill_probe_leaves_the_plan_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # On this CPU box the warmup itself fails (no NVIDIA driver): 0 bytes, the policy's tiles.
    _no_small_tiles(monkeypatch)
    part = _plan(monkeypatch, 3426, 93, 673).parts[0]
    assert gemm._spilled_bytes(part, torch.empty(1), torch.empty(1), torch.empty(1), None, torch.device("cpu")) == 0
    assert part.kw["BLOCK_K"] == 64


@pytest.mark.skipif(_ptxas() is None, reason="needs Triton's NVIDIA backend with ptxas")
def test_the_planned_8_warp_kernel_no_longer_spills_on_sm_90(monkeypatch: pytest.MonkeyPatch) -> None:
    # fp16 91x31x24363 B^T: 128x128x64 with 8 warps; the row that won 0.58 -> 1.15x eager 32 deep (H100, session 14)
    # and 0.60 -> 1.10 with the spill check (H200, session 15). The check here asks ptxas instead of the driver.
    _no_small_tiles(monkeypatch)
    monkeypatch.setattr(gemm, "_spilled_bytes", lambda part, *args: _ptxas_spills(part))
    part = _plan(monkeypatch, 91, 31, 24363, b_t=True).parts[0]
    assert (part.kw["num_warps"], part.kw["BLOCK_K"]) == (8, 32)
    assert _ptxas_spills(part) <= policy.MISALIGNED_SPILL_LIMIT
