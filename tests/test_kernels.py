"""Layer (e): every kernel in Triton's interpreter on small odd shapes and all dtypes; the dropout contract; input
validation. GPU-only tests are marked `gpu` and skipped without a device."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import pytest
import torch

from rocm_triton_doctor import kernels
from rocm_triton_doctor.kernels import (add_mul, attention, bias_gelu_dropout_residual, gemm, layernorm, rmsnorm,
                                        softmax, swiglu)
from rocm_triton_doctor.kernels.policy import target_for_device
from rocm_triton_doctor.smoke import correctness

CPU = torch.device("cpu")
ALL_CASES = [c for m in kernels.REGISTRY for c in m.cases("quick", target_for_device("cpu"))]


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_kernel_case_in_interpreter(case: object) -> None:
    gen = torch.Generator().manual_seed(7)
    inputs = case.setup(CPU, gen)  # type: ignore[attr-defined]
    v = correctness.check_case(case, inputs, CPU, tf32=False)  # type: ignore[arg-type]
    assert v.ok, v.problems


def test_every_kernel_and_dtype_is_covered_on_cpu() -> None:
    covered = {(c.kernel, c.dtype) for c in ALL_CASES}
    for name in kernels.NAMES:
        for dt in (torch.float16, torch.bfloat16, torch.float32):
            assert (name, dt) in covered, f"{name} has no interpreter case for {dt}"


def _gemm_inputs(M: int = 70, K: int = 50, N: int = 90) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randn(M, K, generator=g), torch.randn(K, N, generator=g) / 8, torch.randn(N, generator=g))


def test_dropout_same_seed_same_mask_and_tile_independent() -> None:
    a, b, bias = _gemm_inputs()
    one = gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=5)
    assert torch.equal(one, gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=5))
    # Other tiles sum K in another order (values differ in the last bits) but the MASK must be identical.
    small = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2, "num_warps": 4}
    tiled = gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=5, config=small)
    assert torch.equal(one != 0, tiled != 0)
    torch.testing.assert_close(one, tiled, rtol=1e-5, atol=1e-5)
    other = gemm.gemm(a, b, bias, "bias_relu", p=0.3, seed=6)
    assert not torch.equal(one != 0, other != 0)


@pytest.mark.parametrize("epilogue,p", [("none", 0.0), ("bias_gelu", 0.0), ("bias_relu", 0.3)])
def test_tma_gemm_matches_the_pointer_kernel(epilogue: str, p: float) -> None:
    # The Hopper kernel (tensor descriptors, persistent grid) in the interpreter: edge tiles rely on the descriptors'
    # zero fill (67 rows, 72 columns, K 40 are no multiples of the 32-wide tiles) and the dropout mask is the same.
    g = torch.Generator().manual_seed(1)
    a = torch.randn(67, 40, generator=g, dtype=torch.float16)
    b = (torch.randn(40, 72, generator=g) / 6).to(torch.float16)
    bias = torch.randn(72, generator=g, dtype=torch.float16)
    cfg = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "num_warps": 4}
    tma = gemm.gemm(a, b, bias, epilogue, p=p, seed=9, config=cfg, kernel="tma")
    ptr = gemm.gemm(a, b, bias, epilogue, p=p, seed=9, config=cfg, kernel="pointer")
    assert torch.equal(tma != 0, ptr != 0)
    torch.testing.assert_close(tma, ptr, rtol=1e-3, atol=1e-3)
    ref = gemm.reference(a, b, bias, epilogue).to(torch.float16)
    if p == 0.0:
        torch.testing.assert_close(tma, ref, rtol=1e-2, atol=1e-2)


def test_gemm_refuses_operands_past_32_bit_offsets() -> None:
    # Stride-0 views: 2^31 logical elements without the memory.
    a = torch.zeros(1, 1, dtype=torch.float16).expand(2**16, 2**15)
    b = torch.zeros(1, 1, dtype=torch.float16).expand(2**15, 8)
    with pytest.raises(ValueError, match="2\\^31"):
        gemm.gemm(a, b)


def test_tma_gemm_refuses_layouts_a_descriptor_cannot_describe() -> None:
    a = torch.randn(16, 45, dtype=torch.float16)  # 90-byte rows: not a multiple of 16 bytes
    with pytest.raises(ValueError, match="TMA"):
        gemm.gemm(a, torch.randn(45, 32, dtype=torch.float16), kernel="tma")
    with pytest.raises(ValueError, match="TMA"):
        gemm.gemm(torch.randn(16, 32), torch.randn(32, 32), kernel="tma")  # fp32
    with pytest.raises(ValueError, match="kernel must be"):
        gemm.gemm(torch.randn(16, 32), torch.randn(32, 32), kernel="cutlass")


@pytest.mark.parametrize("causal", [False, True])
def test_tma_attention_matches_the_pointer_kernel(causal: bool) -> None:
    # The Hopper attention kernel in the interpreter: S = 100 is no multiple of the 64-row tiles, so the descriptors'
    # zero fill (reads) and clipping (the output store) are exercised.
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 100, 64, generator=g).to(torch.float16) for _ in range(3))
    tma = attention.attention(q, k, v, causal, kernel="tma")
    ptr = attention.attention(q, k, v, causal, kernel="pointer")
    torch.testing.assert_close(tma, ptr, rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(tma.double(), attention.reference(q, k, v, causal), rtol=1e-2, atol=1e-2)
    with pytest.raises(ValueError, match="TMA"):
        attention.attention(q.float(), k.float(), v.float(), causal, kernel="tma")


def test_dropout_p0_is_the_identity_and_kept_values_are_scaled() -> None:
    a, b, bias = _gemm_inputs()
    plain = gemm.gemm(a, b, bias, "bias")
    assert torch.equal(plain, gemm.gemm(a, b, bias, "bias", p=0.0, seed=3))
    dropped = gemm.gemm(a, b, bias, "bias", p=0.25, seed=3)
    kept = dropped != 0
    torch.testing.assert_close(dropped[kept], plain[kept] / 0.75, rtol=1e-6, atol=1e-6)


def test_dropout_keep_rate_binomial_bound() -> None:
    x = torch.randn(64, 1024) + 5.0  # never ~0, so every element is decided
    res = torch.zeros_like(x)
    p = 0.2
    out = bias_gelu_dropout_residual.bias_gelu_dropout_residual(x, torch.zeros(1024), res, p=p, seed=11)
    n, k = out.numel(), int((out != 0).sum())
    z = (k - n * (1 - p)) / (n * p * (1 - p)) ** 0.5
    assert abs(z) < correctness.Z_BOUND


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan")])
def test_invalid_dropout_probability_is_refused(p: float) -> None:
    a, b, bias = _gemm_inputs()
    with pytest.raises(ValueError, match="dropout probability"):
        gemm.gemm(a, b, bias, "bias", p=p)


def test_launchers_validate_inputs() -> None:
    a, b, bias = _gemm_inputs()
    with pytest.raises(ValueError, match="inner dimensions"):
        gemm.gemm(a, a, bias)
    with pytest.raises(ValueError, match="needs a bias"):
        gemm.gemm(a, b, None, "bias_relu")
    with pytest.raises(TypeError, match="mixed dtypes"):
        gemm.gemm(a, b.half())
    with pytest.raises(TypeError, match="not supported"):
        add_mul.add_mul(*(torch.ones(4, dtype=torch.int32),) * 3)
    with pytest.raises(ValueError, match="contiguous"):
        add_mul.add_mul(torch.ones(4, 4).t(), torch.ones(4, 4), torch.ones(4, 4))
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        rmsnorm.rmsnorm(torch.ones(8, 8).t(), torch.ones(8))
    with pytest.raises(ValueError, match="must have shape"):
        layernorm.layernorm(torch.ones(3, 8), torch.ones(7), torch.ones(8))
    with pytest.raises(ValueError, match="head dim"):
        attention.attention(*(torch.ones(1, 1, 8, 48),) * 3)
    with pytest.raises(ValueError, match="shapes differ"):
        swiglu.swiglu(torch.ones(3), torch.ones(4))
    with pytest.raises(ValueError, match="power of two"):
        add_mul.add_mul(torch.ones(8), torch.ones(8), torch.ones(8), block=100)


def test_cpu_tensors_need_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(ValueError, match="TRITON_INTERPRET"):
        softmax.softmax(torch.ones(2, 8))


def test_unwritten_output_is_caught() -> None:
    """A launcher that leaves part of the poisoned output untouched must fail the check (NaN never passes)."""
    case = add_mul.make_case(100, torch.float32)

    def half_written(x: dict, out: torch.Tensor | None) -> torch.Tensor:
        o = out if out is not None else torch.empty(100)
        add_mul.add_mul(x["x"][:50], x["y"][:50], x["z"][:50], out=o[:50])
        return o

    lazy = case.__class__(**{**case.__dict__, "run": half_written})
    v = correctness.check_case(lazy, lazy.setup(CPU, torch.Generator().manual_seed(0)), CPU, tf32=False)
    assert not v.ok and any("NaN/unwritten" in p for p in v.problems)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_gpu_quick_preset() -> None:  # pragma: no cover - runs on the lent GPU, not in CI
    from rocm_triton_doctor.smoke.runner import run_smoke

    report = run_smoke("cuda", "quick")
    assert report.exit_code == 0, [r.id for r in report.results if r.status != "pass"]
