"""policy_fp32: which input precision fp32 dots take per target, the tensor-core tiles, and that gemm() and the
attention launchers pass them on (spied launches: nothing runs on a GPU here)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from rocm_triton_doctor.kernels import launch as launch_mod
from rocm_triton_doctor.kernels import attention, attention_backward, gemm, policy, policy_fp32
from rocm_triton_doctor.kernels.policy import Target

H100 = Target("cuda", "sm_90", 32)
T4 = Target("cuda", "sm_75", 32)
MI300 = Target("hip", "gfx942", 64)
CPU = Target("interpreter", "cpu", 1)


def test_fp32_accuracy_takes_the_3xtf32_split_only_where_tf32_tensor_cores_are() -> None:
    assert policy.fp32_dot_precision(H100) == "tf32x3"
    assert policy.fp32_dot_precision(Target("cuda", "sm_80", 32)) == "tf32x3"
    assert policy.fp32_dot_precision(T4) == "ieee"  # no TF32 before Ampere
    assert policy.fp32_dot_precision(Target("cuda", "sm_89", 32)) == "ieee"  # GeForce: TF32 no faster than fp32
    assert policy.fp32_dot_precision(MI300) == "ieee"  # bf16x6 exists there, not measured
    assert policy.fp32_dot_precision(CPU) == "ieee"


def test_an_old_triton_keeps_ieee_products(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before triton-lang/triton#5335 an infinite input made the split's cross terms NaN.
    policy_fp32.fp32_dot_precision.cache_clear()
    monkeypatch.setattr(policy_fp32, "_triton_version", lambda: (3, 1))
    try:
        assert policy_fp32.fp32_dot_precision(H100) == "ieee"
    finally:
        policy_fp32.fp32_dot_precision.cache_clear()


def test_precision_supported() -> None:
    assert policy.precision_supported(MI300, "ieee") and policy.precision_supported(CPU, "tf32x3")
    assert policy.precision_supported(H100, "tf32x3") and policy.precision_supported(H100, "tf32")
    assert not policy.precision_supported(MI300, "tf32x3") and not policy.precision_supported(T4, "tf32")


@pytest.mark.parametrize(("M", "N", "K", "b_nmajor", "aligned", "want"), [
    (16, 4096, 4096, False, True, None),  # decode rows with a long K: the decode tiles
    (12, 22761, 390, False, True, (64, 64, 4)),  # short K: no decode tiles (0.33x against 0.61x)
    (4096, 4096, 4096, True, True, (128, 64, 4)),
    (4364, 24463, 3802, False, True, (128, 128, 8)),  # K-major B with two waves of 128x128 tiles
    (3713, 212, 854, False, True, (64, 64, 4)),
    (1373, 616, 495, True, False, (64, 64, 4)),  # an operand left misaligned: smaller tiles
    (2933, 34, 1033, False, False, (32, 64, 4)),  # ... and 17-128 columns: 32-row tiles (0.26 -> 0.68x, H200)
    (401, 76, 3747, False, False, (32, 128, 4)),
    (2727, 42, 8661, False, False, (64, 64, 4)),  # A of 23.6 million elements: the 64-row tiles (0.75 vs 0.53x)
    (64, 4096, 4096, False, True, (64, 64, 4)),
])
def test_tensor_core_tiles(M: int, N: int, K: int, b_nmajor: bool, aligned: bool, want: Any) -> None:
    cfg = policy.gemm_tc_config(M, N, K, 132, b_nmajor, aligned)
    assert (cfg if cfg is None else (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"])) == want
    full = policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=b_nmajor, tc=True, aligned=aligned)
    if not aligned and policy.misaligned_small_tiles(H100, M, N, K, 4, 132):  # session 27 (test_policy.py)
        assert full == {**policy.MISALIGNED_SMALL_TILE, "SPLIT_K": full["SPLIT_K"]}
    elif want is not None:
        assert (full["BLOCK_M"], full["BLOCK_N"], full["BLOCK_K"]) == (want[0], want[1], 32) and full["SPLIT_K"] >= 1


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, target: Target) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")  # no per-device cache for a pretend GPU
    # gemm and attention launch through launch_site.Site, which calls kernels.launch.launch
    monkeypatch.setattr(module if hasattr(module, "launch") else launch_mod, "launch",
                        lambda fn, grid, *a, **kw: calls.append((fn.fn.__name__, kw)))
    monkeypatch.setattr(policy, "target_for_device", lambda device: target)
    return calls


@pytest.mark.parametrize(("target", "precision", "want"), [(H100, "auto", "tf32x3"), (H100, "ieee", "ieee"),
                                                          (H100, "tf32", "tf32"), (MI300, "auto", "ieee")])
def test_gemm_launches_the_resolved_precision(monkeypatch: pytest.MonkeyPatch, target: Target, precision: str,
                                              want: str) -> None:
    gemm.clear_plans()
    calls = _spy(monkeypatch, gemm, target)
    # 512 rows: past FP32_NMAJOR_IEEE_MAX_M, where "auto" resolves to the split on an H100
    gemm.gemm(torch.empty(512, 512), torch.empty(512, 256), precision=precision)
    assert calls and all(kw["PRECISION"] == want for name, kw in calls if name == "gemm_kernel")
    gemm.clear_plans()


def test_gemm_refuses_tf32_products_where_there_are_none(monkeypatch: pytest.MonkeyPatch) -> None:
    gemm.clear_plans()
    _spy(monkeypatch, gemm, MI300)
    with pytest.raises(ValueError, match="TF32 tensor cores"):
        gemm.gemm(torch.empty(64, 64), torch.empty(64, 64), precision="tf32x3")
    with pytest.raises(ValueError, match="precision must be one of"):
        gemm.gemm(torch.empty(8, 8), torch.empty(8, 8), precision="fp64")
    gemm.clear_plans()


def test_16_bit_gemm_ignores_the_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    gemm.clear_plans()
    calls = _spy(monkeypatch, gemm, H100)
    gemm.gemm(torch.empty(256, 512, dtype=torch.bfloat16), torch.empty(512, 256, dtype=torch.bfloat16), kernel="pointer")
    assert calls[0][1]["PRECISION"] == "ieee"
    gemm.clear_plans()


@pytest.mark.parametrize(("dtype", "want"), [(torch.float32, "tf32x3"), (torch.bfloat16, "ieee")])
def test_attention_forward_and_backward_name_their_dot_precision(monkeypatch: pytest.MonkeyPatch, dtype: torch.dtype,
                                                                 want: str) -> None:
    # Left unset, tl.dot takes TF32 for fp32 tiles on NVIDIA: fp32 attention was 11-15x its tolerance off (H100/H200).
    attention.clear_plans()
    calls = _spy(monkeypatch, attention, H100)
    q = torch.empty(1, 2, 64, 64, dtype=dtype)
    attention.attention(q, q, q, kernel="pointer")
    assert [kw["DOT_PREC"] for _, kw in calls] == [want]
    bcalls = _spy(monkeypatch, attention_backward, H100)
    lse = torch.empty(1, 2, 64)
    attention_backward.attention_backward(q, q, q, q, q, lse, False, 0.125)
    assert [kw.get("DOT_PREC") for name, kw in bcalls if name != "attn_bwd_preprocess_kernel"] == [want, want]
    attention.clear_plans()


@pytest.mark.parametrize(("M", "K", "N", "bm", "bn", "want", "wave"), [
    # 32 splits since session 33 (LATENCY_SPLIT_MAX 64): fp32 256x64x8192 B^T 1.06 -> 1.26x cuBLAS at 32 (H200)
    (86, 8564, 38, 64, 64, 32, 32), (1024, 4096, 64, 128, 64, 32, 32),
    (573, 1203, 28, 128, 64, 16, 16),  # past 16 splits each keeps 128 of K (LONG_SPLIT_MIN_K)
    (4415, 5669, 38, 128, 64, 8, 8),  # 35 tiles: 16 splits would pass four programs per SM
    # 128 tiles: more than half a wave, one pass under the half-wave bound; the policy splits aligned grids up to
    # one wave (session 29: 2008x1024x508, 128 such tiles, 0.84 -> 1.05x eager split 4 on an H200)
    (1024, 1024, 1024, 128, 64, 1, 4),
    (236, 40, 170, 128, 64, 1, 1),  # K of 40: a split would keep under one 32-deep block
])
def test_fp32_small_grids_split_k_deeper_than_16_bit(M: int, K: int, N: int, bm: int, bn: int, want: int,
                                                     wave: int) -> None:
    assert policy.gemm_split_latency_bound(M, N, K, bm, bn, 32, 132, 66) == want
    assert policy.gemm_split_latency_bound(M, N, K, bm, bn, 32, 132, 132) == wave
    cfg = policy.gemm_config(H100, M, N, K, 4, cus=132, tc=True)
    if (cfg["BLOCK_M"], cfg["BLOCK_N"]) == (bm, bn):
        assert cfg["SPLIT_K"] == wave


def test_aligned_fp32_grids_split_up_to_one_wave(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1213x6172x256 B^T (76 tiles of 64x64): unsplit 0.55x eager, split 4 1.13x (H200, session 29); the switch off
    # gives the half-wave bound back
    cfg = policy.gemm_config(H100, 1213, 256, 6172, 4, cus=132, b_nmajor=False, tc=True, aligned=True)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["SPLIT_K"]) == (64, 64, 4)
    # 128x64 tiles (an N-major B) up to 6 programs per SM: 480x1936x1100, 72 tiles, split 8 (0.89 -> 1.10x eager)
    assert policy.gemm_config(H100, 480, 1100, 1936, 4, cus=132, tc=True, aligned=True)["SPLIT_K"] == 8
    assert policy.gemm_config(H100, 2008, 508, 1024, 4, cus=132, tc=True, aligned=True)["SPLIT_K"] == 4  # 128 tiles
    try:
        monkeypatch.setattr(policy_fp32, "FP32_TC_WIDE_SPLIT", False)
        policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
        assert policy.gemm_config(H100, 480, 1100, 1936, 4, cus=132, tc=True, aligned=True)["SPLIT_K"] == 4
        monkeypatch.setattr(policy_fp32, "FP32_TC_SPLIT_WAVE", False)
        policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
        assert policy.gemm_config(H100, 1213, 256, 6172, 4, cus=132, b_nmajor=False, tc=True,
                                  aligned=True)["SPLIT_K"] == 1
    finally:
        policy.gemm_config.cache_clear()  # type: ignore[attr-defined]


def test_a_misaligned_fp32_grid_of_up_to_one_wave_still_splits() -> None:
    # 30x2350x7191 (B misaligned, 64x64 tiles: 113 of them) ran at 0.24x eager unsplit on an H200
    assert policy.gemm_split_latency_bound(30, 7191, 2350, 64, 64, 32, 132, 66) == 1
    assert policy.gemm_split_latency_bound(30, 7191, 2350, 64, 64, 32, 132, 132) == 4
    assert policy.gemm_config(H100, 30, 7191, 2350, 4, cus=132, tc=True, aligned=False)["SPLIT_K"] == 4


def test_a_16_bit_small_grid_read_with_scalar_loads_splits_deeper() -> None:
    # bf16 139x5478x51 B^T (K odd, the weight not copied at M < 256): 0.22x cuBLAS at split 2, 0.81x at 16 (H200)
    aligned = policy.gemm_config(H100, 139, 51, 5478, 2, cus=132, b_nmajor=False)
    # the aligned skinny-N rule: >= 256 of K per split, at most 8 — more only up to one program an SM (3 tiles here)
    assert aligned["SPLIT_K"] == 16
    # 32 since session 33 (bf16 169x81x15545, a misaligned B in 3 tiles: 0.49x cuBLAS at 16 splits, 0.77x at 32)
    assert policy.gemm_config(H100, 139, 51, 5478, 2, cus=132, b_nmajor=False, aligned=False)["SPLIT_K"] == 32
    # more than half a wave of tiles: 16-bit grids lost at every split (77x1791x29225 B^T)
    assert policy.gemm_config(H100, 77, 29225, 1791, 2, cus=132, b_nmajor=False, aligned=False)["SPLIT_K"] == 1


def test_decode_rows_against_an_n_major_b_keep_ieee_products(monkeypatch: pytest.MonkeyPatch) -> None:
    assert policy.gemm_fp32_precision(H100, 3, True) == "ieee"
    assert policy.gemm_fp32_precision(H100, 3, False) == "tf32x3"  # nn.Linear's weight: the split won there
    assert policy.gemm_fp32_precision(H100, 400, True) == "ieee"  # up to FP32_NMAJOR_IEEE_MAX_M rows (session 18)
    assert policy.gemm_fp32_precision(H100, 401, True) == "tf32x3"
    assert policy.gemm_fp32_precision(H100, 17, False) == "tf32x3"
    # a K of one 32-deep block at any M (session 19, H200: 4282x3649x25 0.30 -> 0.84x cuBLAS; fresh K 17-32 draws
    # 0.45-0.78 -> 0.84-0.89); the split wins from K = 34 and against a K-major B
    assert policy.gemm_fp32_precision(H100, 4282, True, 25) == "ieee"
    assert policy.gemm_fp32_precision(H100, 4282, True, 33) == "tf32x3"
    assert policy.gemm_fp32_precision(H100, 4282, False, 25) == "tf32x3"
    big = policy.gemm_config(H100, 4282, 3649, 25, 4, cus=132, b_nmajor=True, tc=False)
    assert (big["BLOCK_M"], big["BLOCK_N"], big["BLOCK_K"], big["SPLIT_K"]) == (64, 128, 32, 1)
    assert policy.gemm_fp32_precision(MI300, 3, False) == "ieee"
    # ... and up to K = 96 at outputs of up to 2^24 elements when an operand is misaligned (session 23, H200: seed
    # 15's 1949x1815x52 0.25 -> 0.76x cuBLAS on IEEE 64x64x32); aligned operands and larger outputs keep the split
    assert policy.gemm_fp32_precision(H100, 1949, True, 52, 1815, aligned=False) == "ieee"
    assert policy.gemm_fp32_precision(H100, 1949, True, 52, 1816, aligned=True) == "tf32x3"
    assert policy.gemm_fp32_precision(H100, 1949, True, 97, 1815, aligned=False) == "tf32x3"
    assert policy.gemm_fp32_precision(H100, 3558, True, 58, 12313, aligned=False) == "tf32x3"
    assert policy.gemm_fp32_precision(H100, 1949, False, 52, 1815, aligned=False) == "tf32x3"  # K-major B: 1.03
    short = policy.gemm_config(H100, 1949, 1815, 52, 4, cus=132, b_nmajor=True, tc=False, aligned=False)
    assert (short["BLOCK_M"], short["BLOCK_N"], short["BLOCK_K"], short["SPLIT_K"]) == (64, 64, 32, 1)
    gemm.clear_plans()
    calls = _spy(monkeypatch, gemm, H100)
    # The tile kernel's rule (kernel="pointer"); "auto" runs such rows on the GEMV kernel (exact fp32 products).
    gemm.gemm(torch.empty(3, 1346), torch.empty(1346, 512), kernel="pointer")
    gemm.gemm(torch.empty(3, 1346), torch.empty(512, 1346).t(), kernel="pointer")
    assert [kw["PRECISION"] for name, kw in calls if name == "gemm_kernel"] == ["ieee", "tf32x3"]
    calls.clear()
    gemm.gemm(torch.empty(3, 1346), torch.empty(512, 1346).t())
    assert [name for name, kw in calls][0] == "gemv_kshift_kernel"  # the GEMV reading K-major columns in windows
    gemm.clear_plans()


_GPU_FP32 = """
import json, torch
import torch.nn.functional as F
from rocm_triton_doctor.kernels import attention, gemm
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
g = torch.Generator(device=dev).manual_seed(0)
worst = {}
def ratio(name, out, ref):  # |err| / (1e-4 + 1e-4 |ref|): fp32's tolerance
    worst[name] = float(((out.double() - ref).abs() / (1e-4 + 1e-4 * ref.abs())).max())
for M, K, N, bt in ((1024, 1024, 1024, False), (300, 1433, 325, False), (3, 1346, 4096, True), (77, 4097, 999, True)):
    a = torch.randn(M, K, device=dev, generator=g)
    b = torch.randn(N, K, device=dev, generator=g).t() if bt else torch.randn(K, N, device=dev, generator=g)
    b = b / K ** 0.5
    ratio(f"gemm {M}x{K}x{N}", gemm.gemm(a, b), a.double() @ b.double())
a = torch.randn(64, 128, device=dev, generator=g)
a[3, 5] = float("inf")
b = torch.rand(128, 64, device=dev, generator=g) + 0.5  # positive: row 3 is +inf everywhere, as in cuBLAS
out = gemm.gemm(a, b)
worst["gemm inf rows match cuBLAS"] = bool(torch.equal(out.isinf(), (a @ b).isinf()) and not out.isnan().any())
for causal, hk, d in ((False, 8, 64), (True, 2, 80)):
    q = torch.randn(2, 8, 300, d, device=dev, generator=g, requires_grad=True)
    k = torch.randn(2, hk, 333, d, device=dev, generator=g, requires_grad=True)
    v = torch.randn(2, hk, 333, d, device=dev, generator=g, requires_grad=True)
    mask = torch.ones(300, 333, dtype=torch.bool, device=dev).tril() if causal else None
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    ref = F.scaled_dot_product_attention(q64, k64, v64, attn_mask=mask, enable_gqa=True)
    out = attention.autograd_op(q, k, v, causal=causal)
    ratio(f"attention causal={causal} D={d}", out, ref)
    do = torch.randn(out.shape, device=dev, generator=g)
    out.backward(do)
    ref.backward(do.double())
    for name, t, t64 in (("dq", q, q64), ("dk", k, k64), ("dv", v, v64)):
        ratio(f"attention causal={causal} D={d} {name}", t.grad, t64.grad)
print(json.dumps(worst))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_fp32_gemm_and_attention_keep_fp32_accuracy_on_the_gpu() -> None:  # pragma: no cover - the lent GPU
    # The interpreter computes every dot in numpy, so only a GPU sees what precision tl.dot really used: fp32 attention
    # had run on TF32 (11-15x the tolerance off fp64 on an H100/H200) until DOT_PREC.
    from tests.kernels.helpers import gpu_script_json

    worst = gpu_script_json(_GPU_FP32)
    assert worst.pop("gemm inf rows match cuBLAS") is True
    assert all(r <= 1.0 for r in worst.values()), worst


@pytest.mark.parametrize("split", [1, 4])
def test_32_row_fp32_tiles_compute_right_on_misaligned_operands(split: int) -> None:
    # K odd (A and the K-major B misaligned), N = 34 in a 64-wide tile, M not a multiple of 32, a partial last K block.
    g = torch.Generator().manual_seed(split)
    a, b = torch.randn(45, 101, generator=g), torch.randn(34, 101, generator=g).t()
    cfg = {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3, "SPLIT_K": split}
    torch.testing.assert_close(gemm.gemm(a, b, config=cfg), (a.double() @ b.double()).float(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("M", "K", "N", "split"), [
    (28, 6016, 26517, 2),   # the hunt's 0.12x row: 208 tiles, two splits stay within 4 programs an SM
    (17, 4096, 11007, 4),   # 86 tiles
    (24, 12000, 1023, 32),  # 8 tiles and a long K: 32 splits of 375 (fp32 100x300x30000 0.62 -> 0.84x at 32)
    (96, 3000, 20001, 1),   # 471 tiles: two splits would pass 4 programs an SM (528 on 132 SMs)
])
def test_fp32_against_an_n_major_b_takes_ieee_tiles_from_17_to_400_rows(M: int, K: int, N: int, split: int) -> None:
    cfg = policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=True, tc=False, aligned=N % 4 == 0)
    assert {k: cfg[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages")} == {
        "BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}
    assert cfg["SPLIT_K"] == split == policy.fp32_nmajor_config(M, N, K, 132)["SPLIT_K"]
    # not: 16 rows or fewer (the decode tiles), past 400, a K-major B, the split's tiles (tc), AMD, 128 columns
    for other in (policy.gemm_config(H100, 16, N, K, 4, cus=132, b_nmajor=True),
                  policy.gemm_config(H100, 401, N, K, 4, cus=132, b_nmajor=True),
                  policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=False),
                  policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=True, tc=True),
                  policy.gemm_config(MI300, M, N, K, 4, cus=304, b_nmajor=True),
                  policy.gemm_config(H100, 64, 128, K, 4, cus=132, b_nmajor=True)):
        assert (other["BLOCK_M"], other["BLOCK_N"], other["BLOCK_K"], other["num_stages"]) != (32, 128, 32, 3)
