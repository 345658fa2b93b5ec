"""GEMMs with a handful of output columns (policy_waves.gemm_skinny_config) and fp32 products against a small
misaligned B (policy_gemv.gemv_takes's b_bytes): the rules per target, the launches "auto" makes on a pretend H100,
and the skinny tiles computing right in Triton's interpreter (splits, epilogues, layouts, dropout mask)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

from typing import Any

import pytest
import torch

from rocm_triton_doctor.kernels import launch as launch_mod
from rocm_triton_doctor.kernels import gemm, policy
from tests.kernels.test_gemm import assert_matches, operand

H100 = policy.target_from_name("sm_90")
MI300 = policy.target_from_name("gfx942")


@pytest.fixture(autouse=True)
def _fresh_launch_plans() -> None:
    gemm.clear_plans()


@pytest.mark.parametrize(("M", "K", "N", "elem", "aligned", "bn", "split"), [
    (1561, 5195, 4, 2, True, 16, 8),     # 25 tiles: 8 splits of 649 (H200: 30.4 -> 13.9 us, cuBLAS 15.1)
    (8192, 4096, 8, 2, True, 16, 4),     # a router: 128 tiles, 4 splits fill 4 programs per SM
    (30000, 768, 3, 4, True, 16, 1),     # 469 tiles: more than 4 per SM already
    (777, 2000, 12, 2, True, 16, 4),     # 8 splits would keep under 256 of K
    (1200, 4096, 24, 2, True, 32, 8),    # 17-64 columns: a tile as wide as N
    (9000, 2048, 48, 2, True, 64, 2),
    (257, 8191, 7, 2, False, 16, 32),    # misaligned: the latency-bound split, to 32 of 255 (LONG_SPLIT_MIN_K)
    (86, 8564, 38, 4, True, 64, 32),     # fp32 on tensor cores: latency-bound too
    (64, 50000, 96, 2, True, 128, 64),   # one 16-bit tile: past 8 splits up to a program an SM (0.36 -> 0.76x)
    (3317, 179, 17, 4, True, 32, 1),     # ... but every split keeps 256 of K (2 splits of 89 lost)
    (434, 899, 45, 2, False, 64, 8),     # misaligned: one K block a split is enough (2 splits of 449 lost)
    (3000, 4096, 100, 2, True, 128, 4),  # 65-128 columns: 128-wide tiles, half the programs per SM
    (8192, 4096, 128, 2, True, 128, 2),
    (200, 209, 36, 2, False, 64, 2),     # misaligned, one wave of tiles or less: split
    (2542, 2671, 1, 4, False, 16, 8),    # fp32 misaligned up to 16 columns (0.06 -> 0.27x eager in the A/B)
])
def test_skinny_tiles_on_nvidia(M: int, K: int, N: int, elem: int, aligned: bool, bn: int, split: int) -> None:
    cfg = policy.gemm_config(H100, M, N, K, elem, cus=132, b_nmajor=False, tc=elem == 4, aligned=aligned)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["SPLIT_K"], cfg["num_warps"]) == (64, bn, split, 4)


@pytest.mark.parametrize(("M", "K", "N", "elem", "aligned"), [
    (13562, 209, 36, 2, False),  # misaligned over more than a wave: one pass (2 splits lost, 0.31 -> 0.22x eager)
])
def test_skinny_tiles_without_a_split(M: int, K: int, N: int, elem: int, aligned: bool) -> None:
    cfg = policy.gemm_config(H100, M, N, K, elem, cus=132, b_nmajor=False, tc=elem == 4, aligned=aligned)
    assert (cfg["BLOCK_M"], cfg["SPLIT_K"]) == (64, 1)


@pytest.mark.parametrize(("M", "K", "N"), [(13562, 209, 36), (401, 3747, 76), (229, 301, 48), (333, 2107, 54)])
def test_fp32_against_a_misaligned_operand_past_16_columns_keeps_the_tensor_core_tiles(M: int, K: int, N: int) -> None:
    # every such row of the A/B lost on the skinny tiles (0.25-0.51x eager against 0.30-0.62x); up to K = 2048 session
    # 27's small tiles take them (policy.misaligned_small_tiles: 13562x209x36 0.64 -> 0.70x, 229x301x48 1.46 -> 1.35x)
    assert policy.gemm_skinny_config(M, N, K, 132, aligned=False, fp32=True) is None
    tc = policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=False, tc=True, aligned=False)
    if K <= policy.MISALIGNED_SMALL_TILES_MAX_K:
        assert tc == {**policy.MISALIGNED_SMALL_TILE, "SPLIT_K": tc["SPLIT_K"]}
    else:
        assert tc == policy.gemm_tc_config(M, N, K, 132, False, False) | {"SPLIT_K": tc["SPLIT_K"]}


@pytest.mark.parametrize(("M", "K", "N"), [(65536, 4096, 128), (16384, 8192, 128), (12000, 2048, 96)])
def test_65_to_128_columns_keep_the_general_tiles_when_the_grid_is_full(M: int, K: int, N: int) -> None:
    # H200: bf16 65536x4096x128 B^T 164.3 us on the 128x128 tiles against 172.2 on 64x128 (no split either way)
    assert policy.gemm_skinny_config(M, N, K, 132, b_kmajor=True) is None
    assert policy.gemm_config(H100, M, N, K, 2, cus=132, b_nmajor=False)["BLOCK_M"] == 128


@pytest.mark.parametrize(("M", "K", "N"), [(20000, 1024, 96), (24000, 768, 128), (50000, 768, 65)])
def test_65_to_128_columns_against_a_short_k_major_b_take_the_skinny_tiles(M: int, K: int, N: int) -> None:
    # H200: bf16 24000x768x128 B^T 22.2 -> 11.6 us, fp16 20000x1024x96 B^T 21.4 -> 15.3 (…-s13-wide.json)
    cfg = policy.gemm_config(H100, M, N, K, 2, cus=132, b_nmajor=False)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"], cfg["SPLIT_K"]) == (64, 128, 4, 1)
    assert policy.gemm_config(H100, M, N, K, 2, cus=132, b_nmajor=True)["BLOCK_M"] == 128  # N-major: general
    assert policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=False)["BLOCK_M"] == 128  # fp32: not measured
    assert policy.gemm_skinny_config(M, N, K, 132, aligned=False, b_kmajor=True) is None  # misaligned: not measured


def test_skinny_rule_bounds() -> None:
    assert policy.gemm_config(H100, 16384, 129, 4096, 2, cus=132)["BLOCK_M"] == 128  # past SKINNY_N: general tiles
    assert policy.gemm_config(H100, 16, 8, 4096, 2, cus=132)["BLOCK_M"] == 16  # decode-size M keeps its tiles
    assert policy.gemm_config(MI300, 8192, 8, 4096, 2, cus=304)["BLOCK_N"] >= 64  # AMD: not timed, unchanged
    # the fp32 split workspace stays int32-indexed
    cfg = policy.gemm_skinny_config(2**27, 16, 1 << 20, 132)
    assert cfg is not None and cfg["SPLIT_K"] == 1


CASES = [(150, 600, 8, torch.float32, "t", "bias", 0.0), (97, 1000, 3, torch.bfloat16, "", "bias_relu", 0.0),
         (130, 800, 37, torch.float16, "chunk", "bias_gelu", 0.0), (70, 520, 64, torch.float32, "step", "none", 0.0),
         (65, 700, 16, torch.bfloat16, "t", "bias", 0.3),
         (60, 2000, 100, torch.float32, "t", "bias_gelu", 0.0)]  # fp32 at 65-128 columns: 64x64x32 tiles


@pytest.mark.parametrize(("M", "K", "N", "dtype", "lb", "epilogue", "p"), CASES)
def test_skinny_tiles_compute_right(M: int, K: int, N: int, dtype: torch.dtype, lb: str, epilogue: str,
                                    p: float) -> None:
    g = torch.Generator().manual_seed(M + N)
    a = operand(M, K, "", dtype, g)
    b = operand(K, N, lb, dtype, g, scale=K**-0.5)
    bias = None if epilogue == "none" else operand(1, N, "", dtype, g)[0]
    # a 4-SM pretend GPU: K split
    split: dict[str, Any] | None = policy.gemm_skinny_config(M, N, K, 4, fp32=dtype == torch.float32)
    assert split is not None and split["SPLIT_K"] > 1
    for cfg in (split, {**split, "SPLIT_K": 1}):
        out = gemm.gemm(a, b, bias, epilogue, p=p, seed=5, config=cfg)
        if p == 0.0:
            ref = gemm.reference(a.double(), b.double(), None if bias is None else bias.double(), epilogue)
            assert_matches(out, ref, dtype)
        else:  # the same mask as the interpreter's default tiles: dropout hashes (row, column), not the tiling
            base = gemm.gemm(a, b, bias, epilogue, p=p, seed=5)
            assert torch.equal(out == 0, base == 0)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")  # no per-device cache for a pretend GPU
    monkeypatch.setattr(launch_mod, "launch", lambda fn, grid, *a, **kw: calls.append(fn.fn.__name__))
    monkeypatch.setattr(policy, "target_for_device", lambda device: H100)
    return calls


def test_fp32_against_a_small_misaligned_b_runs_on_the_gemv_at_small_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    # H200: fp32 8192x4x2047 154.7 -> 29.7 us on the GEMV, 177x43x43 B^T 10.1 -> 2.4 (benchmarks/cliff_probe.py);
    # past 96 rows and 2^16 outputs session 27's small tiles won (8192x4x2047 0.63 -> 1.08x eager, 4905x8x1367 0.52 ->
    # 1.06x, 5341x111x71 B^T 0.59 -> 1.05x; docs/measurements/2026-11-29-h200-s27-gemm-final.json)
    assert not policy.gemv_takes(H100, 8192, 4, False, False, 4, 2047)
    assert policy.gemv_takes(H100, 177, 4, False, True, 43, 43)
    assert policy.gemv_takes(H100, 96, 4, False, False, 4, 2047)  # the rows GEMV_FP32_MISALIGNED_ROWS covers
    assert policy.gemv_takes(H100, 8192, 4, False, True, 43, 9)  # 16 columns or fewer: no small tiles, the GEMV
    assert policy.gemv_takes(policy.target_from_name("gfx942"), 8192, 4, False, False, 4, 2047)  # AMD: as before
    assert not policy.gemv_takes(H100, 8192, 4, True, False, 4, 2048)  # aligned: the tiles won
    assert not policy.gemv_takes(H100, 8192, 4, False, False, 128, 129)  # a larger B: the chunks' re-reads cost
    # a long K (fp32 8725x4541x3: 0.20 -> 0.08x eager on the GEMV, whose tiles are far wider than 3 columns)
    assert not policy.gemv_takes(H100, 8725, 4, False, False, 4541, 3)
    assert not policy.gemv_takes(H100, 10630, 4, False, False, 94, 19)  # a narrow N-major B (0.24 -> 0.17x)
    assert not policy.gemv_takes(H100, 8192, 2, False, True, 4, 43)  # 16-bit: the tiles
    assert policy.gemv_takes(H100, 90, 4, False, True, 512, 500)  # the row rule of session 11 still holds ...
    assert not policy.gemv_takes(H100, 90, 4, False, True, 4096, 1 << 14)  # ... where the weight is not copied
    assert policy.gemv_takes(H100, 32, 4, False, True, 4096, 1 << 14)
    calls = _spy(monkeypatch)
    gemm.gemm(torch.empty(500, 43), torch.empty(43, 43).t())  # B^T with K = 43: misaligned rows
    gemm.gemm(torch.empty(500, 4), torch.empty(4, 2047))
    gemm.gemm(torch.empty(500, 4), torch.empty(4, 2048))
    gemm.gemm(torch.empty(500, 4541), torch.empty(4541, 3))
    assert calls[:3] == ["gemv_kernel", "gemm_kernel", "gemm_kernel"] and "gemv_kernel" not in calls[3:]


@pytest.mark.parametrize(("M", "K", "N", "nmajor", "tiles", "split"), [
    (128, 16384, 128, True, (64, 64, 32), 32),    # 4 tiles: 32 splits (64 would keep 256 of K, under 512)
    (90, 20000, 70, True, (64, 64, 32), 32),      # 0.11x cuBLAS in one 64x128x64 tile at 16 splits; 1.09x
    (128, 50000, 96, False, (64, 64, 32), 64),    # 64 splits of 781
    (1000, 1000, 100, True, (64, 64, 32), 8),     # 32 tiles: under a program an SM, so splits of two K blocks
    (384, 4096, 128, True, (64, 64, 32), 16),     # 12 tiles x 16 fill a program an SM: SKINNY_MIN_K holds
    (256, 8192, 64, False, (64, 64, 64), 32),     # 64 columns keep 64-deep tiles
])
def test_fp32_skinny_tiles_and_long_k_splits(M: int, K: int, N: int, nmajor: bool, tiles: tuple[int, int, int],
                                             split: int) -> None:
    """Session 33 (H200, benchmarks/gemm_longk_probe.py): fp32 at 65-128 columns in 64x64x32 tiles, and a long K over
    a few tiles split up to 64 times."""
    cfg = policy.gemm_config(H100, M, N, K, 4, cus=132, b_nmajor=nmajor, tc=not nmajor, aligned=True)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["SPLIT_K"]) == (*tiles, split)
