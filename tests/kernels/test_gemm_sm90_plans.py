"""The launches an H100/H200's policy plans for gemm (sm_90, 132 SMs), run in the interpreter against fp64: the CPU
tests otherwise run the interpreter's own policy (few, large tiles), so a tiling only the GPU takes would reach no CI
run. Session 29's rules each get a shape here (benchmarks/gpu_policy_interpreter_run.py draws random ones)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from rocm_triton_doctor.kernels import gemm, policy, policy_gemv
from tests.kernels.helpers import assert_matches

SM90 = policy.target_from_name("sm_90")


@pytest.fixture
def sm90(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")  # no per-device cache for a pretend GPU
    monkeypatch.setattr(policy, "target_for_device", lambda device: SM90)
    monkeypatch.setattr(gemm, "_cus", lambda dev: 132)
    # the interpreter multiplies bf16 tiles' raw bits (gemm.py) and cannot run inline PTX (the hardware tanh)
    monkeypatch.setattr(gemm, "upcast_dots", lambda target, dtype: True)
    monkeypatch.setattr(policy, "fast_tanh", lambda target, elem_size: False)
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    policy_gemv.gemv_config.cache_clear()
    gemm.clear_plans()
    yield
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    policy_gemv.gemv_config.cache_clear()
    gemm.clear_plans()


@pytest.mark.parametrize(("M", "K", "N", "dtype", "b_t", "sms", "want"), [
    # fp32 decode against a small aligned N-major B: 32x128 GEMV tiles, pipelined, unsplit
    (1, 1025, 304, torch.float32, False, 132,
     {"grid": (10, 1), "BLOCK_N": 32, "BLOCK_K": 128, "STAGES": 3, "split": 1}),
    # fp32 128x64 tensor-core tiles over half a wave (10 on a 16-SM part): K split 8, six programs an SM
    (640, 256, 128, torch.float32, False, 16, {"grid": (10, 8), "BLOCK_M": 128, "BLOCK_N": 64, "split": 8}),
    # fp32 64x64 tiles (B^T) over half a wave (12 of 16): K split up to one wave's worth, 4
    (256, 128, 192, torch.float32, True, 16, {"grid": (12, 4), "BLOCK_M": 64, "BLOCK_N": 64, "split": 4}),
    # fp16 with both operands misaligned and copied (aligned_copy.CopyPlan), decode tiles split 2
    (40, 727, 729, torch.float16, False, 132, {"copies": (True, True), "split": 2}),
    # fp16 with 129-255 columns from 1024 rows over a misaligned K: both copied (policy_align.NARROW_COPY_MIN_ROWS)
    (1024, 257, 130, torch.float16, True, 132, {"copies": (True, True), "split": 1}),
])
def test_the_sm90_plan_computes_the_product(sm90: None, monkeypatch: pytest.MonkeyPatch, M: int, K: int, N: int,
                                            dtype: torch.dtype, b_t: bool, sms: int, want: dict[str, object]) -> None:
    # a part with fewer SMs where the rule is about filling them: the interpreter costs ~1 ms a program
    monkeypatch.setattr(gemm, "_cus", lambda dev: sms)
    g = torch.Generator().manual_seed(M + K + N)
    a = torch.randn(M, K, generator=g).to(dtype)
    b = (torch.randn(N, K, generator=g).to(dtype).t() if b_t else torch.randn(K, N, generator=g).to(dtype)) / K ** 0.5
    bias = torch.randn(N, generator=g).to(dtype)
    ref = gemm.reference(a, b, bias, "bias_gelu")
    # the plan's first call, then (for the GEMV plan; CI time: each call runs up to 80 programs in the interpreter)
    # its replay with fresh tensors of the same signature
    assert_matches(gemm.gemm(a, b, bias, "bias_gelu"), ref, dtype)
    if M == 1:
        assert_matches(gemm.gemm(a.clone(), b.clone(), bias.clone(), "bias_gelu"), ref, dtype)
    (plan,) = [p for k, p in gemm._PLANS.items() if k[3:6] == (M, N, K)]
    (part,) = plan.parts
    got = {"grid": part.grid, "split": part.split, "copies": (plan.copy_a is not None, plan.copy_b is not None),
           **{k: v for k, v in part.kw.items() if k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES")}}
    assert {k: got[k] for k in want} == want


def test_an_m_major_a_under_a_wave_is_read_uncopied(sm90: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """dB = Aᵀ·dY of a backward: Aᵀ's columns contiguous, its stride (41) off 16-byte multiples, a small output. The
    policy copies only dY (policy_align.MMAJOR_COPY_MIN_WAVE_TILE) and the product is right."""
    monkeypatch.setattr(gemm, "_cus", lambda dev: 16)  # fewer K splits: the interpreter costs ~1 ms a program
    g = torch.Generator().manual_seed(41)
    a = torch.randn(2049, 41, generator=g).half()  # the forward's activation: M 2049, K 41
    dy = torch.randn(2049, 257, generator=g).half()  # its output gradient: 257-wide rows (514 bytes)
    at = a.t()
    assert_matches(gemm.gemm(at, dy), gemm.reference(at, dy, None, "none"), torch.float16)
    (plan,) = [p for k, p in gemm._PLANS.items() if k[3:6] == (41, 257, 2049)]
    assert plan.copy_a is None and plan.copy_b is not None
