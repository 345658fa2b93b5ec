"""The GEMV path of gemm (gemm_kernels.gemv_kernel, policy_gemv.py) in Triton's interpreter: hypothesis properties over
rows, layouts (K-major and N-major B, views with odd strides and offsets), dtypes, epilogues, K splits, tails and
special values against an fp64 reference; the dropout mask it draws; when "auto" takes it; its policy per target."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import pytest
import torch
from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import gemm, policy, policy_gemv
from tests.kernels.test_gemm import DTYPES, ODD, _odd_operand, assert_matches, operand

GEMV_TILES = [None, {"BLOCK_M": 8, "BLOCK_N": 16, "BLOCK_K": 16, "SPLIT_K": 3},
              {"BLOCK_M": 8, "BLOCK_N": 32, "BLOCK_K": 8, "SPLIT_K": 8, "num_warps": 2},
              # more splits than K blocks: empty splits add nothing
              {"BLOCK_M": 1, "BLOCK_N": 16, "BLOCK_K": 32, "SPLIT_K": 16}]


@pytest.fixture(autouse=True)
def _fresh_launch_plans() -> None:
    gemm.clear_plans()


class _Spy:
    """Stands in for a jit kernel: records each launch's arguments, then runs it."""

    def __init__(self, fn: object) -> None:
        self.fn, self.calls = fn, []

    def __getitem__(self, grid: object):  # type: ignore[no-untyped-def]
        def run(*args: object, **kwargs: object) -> object:
            self.calls.append((args, kwargs))
            return self.fn[grid](*args, **kwargs)  # type: ignore[index]
        return run


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(M=st.integers(1, 20), N=st.integers(1, 70), K=st.integers(0, 150), dtype=st.sampled_from(DTYPES),
       la=st.sampled_from(["c", "t", "chunk", "step"]), lb=st.sampled_from(["c", "t", "chunk", "step"]),
       epilogue=st.sampled_from(list(gemm.EPILOGUES)), fp32_bias=st.booleans(), tiles=st.sampled_from(GEMV_TILES),
       special=st.sampled_from([None, "nan", "inf", "-inf"]), fp32_out=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_gemv_matches_fp64(M: int, N: int, K: int, dtype: torch.dtype, la: str, lb: str, epilogue: str,
                           fp32_bias: bool, tiles: dict | None, special: str | None, fp32_out: bool, seed: int) -> None:
    if tiles:  # CI time: at most 48 programs (the interpreter runs each in Python; 1,600 took 4 s an example)
        assume(-(-M // tiles["BLOCK_M"]) * -(-N // tiles["BLOCK_N"]) * tiles["SPLIT_K"] <= 48)
    g = torch.Generator().manual_seed(seed)
    a = operand(M, K, la, dtype, g)
    b = operand(K, N, lb, dtype, g, scale=max(K, 1) ** -0.5)
    bias = None
    if epilogue != "none" or fp32_bias:
        bias = torch.randn(N, generator=g).to(torch.float32 if fp32_bias else dtype)
    if special and K:
        b[g.seed() % K, g.seed() % N] = float(special)
    out = torch.full((M, N), 7.0, dtype=torch.float32) if fp32_out else None
    y = gemm.gemm(a, b, bias, epilogue, out=out, config=tiles, kernel="gemv")
    ref = gemm.reference(a, b, bias, epilogue)
    assert_matches(y, ref if fp32_out else ref.to(dtype), torch.float32 if fp32_out and dtype == torch.float32 else dtype)


@pytest.mark.parametrize("kind", ODD)
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_reads_odd_strides_and_offset_views_in_place(kind: str, dtype: torch.dtype) -> None:
    # Misaligned weights are read where they are (the GEMV path makes no aligned copy): both operands odd views.
    g = torch.Generator().manual_seed(11)
    for M in (1, 3):
        a = _odd_operand(kind, M, 77, dtype, g)
        b = _odd_operand(ODD[(ODD.index(kind) + 3) % len(ODD)], 77, 45, dtype, g, scale=0.1)
        bias = torch.randn(45, generator=g).to(dtype)
        ref = gemm.reference(a, b, bias, "bias_gelu").to(dtype)
        assert_matches(gemm.gemm(a, b, bias, "bias_gelu"), ref, dtype)


def test_gemv_row_chunks_cover_every_row() -> None:
    # 37 rows in chunks of 1, 2 and 8 (the chunks of one column tile side by side), with a K split and a tail.
    g = torch.Generator().manual_seed(8)
    a = torch.randn(37, 150, generator=g)
    b = torch.randn(48, 150, generator=g).t() / 12
    bias = torch.randn(48, generator=g)
    ref = gemm.reference(a, b, bias, "bias_gelu")
    for bm in (1, 2, 8):
        cfg = {"BLOCK_M": bm, "BLOCK_N": 16, "BLOCK_K": 32, "SPLIT_K": 2}
        out = torch.full((37, 48), float("nan"))
        assert_matches(gemm.gemm(a, b, bias, "bias_gelu", out=out, kernel="gemv", config=cfg), ref, torch.float32)


def test_gemv_draws_the_same_dropout_mask_as_the_tile_kernels() -> None:
    # The mask hashes (seed, row, column) only: the kernel a GEMM runs on must not change which elements drop.
    g = torch.Generator().manual_seed(5)
    b = torch.randn(200, 72, generator=g) / 14
    bias = torch.randn(72, generator=g)
    for rows, split in ((3, 1), (3, 4), (19, 2)):  # 19 rows: chunks of 4, the mask keyed on the global row
        a = torch.randn(rows, 200, generator=g)
        cfg = {"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 32, "SPLIT_K": split}
        y = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="gemv", config=cfg)
        z = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="pointer")
        assert torch.equal(y == 0, z == 0)
        assert torch.allclose(y, z, atol=1e-5, rtol=1e-5)
    a = a[:3]
    y = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=99, kernel="gemv")
    other = gemm.gemm(a, b, bias, "bias_relu", p=0.4, seed=100, kernel="gemv")
    assert not torch.equal(other == 0, y == 0)


def test_auto_takes_gemv_for_a_few_rows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy(gemm.gemv_kernel)
    monkeypatch.setattr(gemm, "gemv_kernel", spy)
    g = torch.Generator().manual_seed(1)
    b = torch.randn(64, 40, generator=g)
    for M, used in ((1, True), (4, True), (5, False)):  # the interpreter's rule: up to 4 rows
        spy.calls.clear()
        gemm.gemm(torch.randn(M, 64, generator=g), b)
        assert bool(spy.calls) is used, M
    spy.calls.clear()
    gemm.gemm(torch.randn(1, 64, generator=g), b, config={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16})
    assert not spy.calls  # a caller's tiles are pointer-kernel tiles unless kernel="gemv"


def test_gemv_rule_on_gpus() -> None:
    # fp32: up to 8 rows against a K-major weight, 3 against a row-major one, on NVIDIA; 16-bit only against a
    # misaligned K-major weight, up to 3 rows; AMD only misaligned weights (its matrix cores take fp32 natively).
    h100 = policy.Target("cuda", "sm_90", 32)
    mi300 = policy.Target("hip", "gfx942", 64)
    assert policy.gemv_takes(h100, 8, 4, True, True) and not policy.gemv_takes(h100, 9, 4, True, True)
    assert policy.gemv_takes(h100, 3, 4, True, False) and not policy.gemv_takes(h100, 4, 4, True, False)
    assert policy.gemv_takes(h100, 3, 2, False, True) and not policy.gemv_takes(h100, 4, 2, False, True)
    assert not policy.gemv_takes(h100, 1, 2, True, True) and not policy.gemv_takes(h100, 1, 2, False, False)
    assert not policy.gemv_takes(mi300, 1, 4, True, True) and policy.gemv_takes(mi300, 8, 4, False, True)
    assert policy.gemv_takes(mi300, 2, 2, False, True) and not policy.gemv_takes(mi300, 2, 2, True, True)
    # fp32 against a misaligned K-major weight: up to 96 rows in chunks of 8; not against an aligned one, and not
    # 4 rows or more against an N-major one (session 18: the IEEE tiles won there, 28x6016x26517 0.12 -> 0.93x)
    assert policy.gemv_takes(h100, 89, 4, False, True) and not policy.gemv_takes(h100, 30, 4, False, False)
    assert not policy.gemv_takes(h100, 4, 4, False, False, 6000, 1999)
    assert not policy.gemv_takes(h100, 97, 4, False, True) and not policy.gemv_takes(h100, 16, 4, True, True)
    assert not policy.gemv_takes(h100, 16, 2, False, True)
    # 16-bit against a misaligned N-major B on NVIDIA (the pipelined K loop): up to 4 rows with K of 512 or more
    assert policy.gemv_takes(h100, 4, 2, False, False, 512, 5001) and not policy.gemv_takes(h100, 5, 2, False, False, 512, 5001)
    assert not policy.gemv_takes(h100, 2, 2, False, False, 511, 5001) and not policy.gemv_takes(h100, 2, 2, False, False)
    assert not policy.gemv_takes(h100, 2, 2, True, False, 4096, 4096) and not policy.gemv_takes(mi300, 2, 2, False, False, 4096, 4097)


@pytest.mark.parametrize(("target", "M", "N", "K", "elem", "kmajor", "stages"), [
    ("sm_90", 2, 4097, 4096, 2, False, 3),   # 16-bit, 16x128 tiles of 4 KiB a stage: pipelined
    ("sm_90", 3, 161, 70, 4, False, 3),      # fp32, 3 rows (8x128 tiles): pipelined
    ("sm_90", 1, 307, 9693, 4, False, 1),    # fp32, 1 row: 32x128 tiles of 16 KiB a stage (0.93 -> 0.20x pipelined)
    ("sm_90", 2, 11402, 17198, 2, True, 1),  # K-major B: never (its stages fill shared memory)
    ("gfx942", 2, 4097, 4096, 2, False, 1),  # AMD: not timed, not pipelined
])
def test_gemv_pipelines_its_k_loop_where_measured(target: str, M: int, N: int, K: int, elem: int, kmajor: bool,
                                                  stages: int) -> None:
    cfg = policy.gemv_config(policy.target_from_name(target), M, N, K, elem, kmajor, 0)
    assert cfg["STAGES"] == stages
    assert (cfg["BLOCK_K"] * cfg["BLOCK_N"] * elem <= policy.GEMV_PIPE_MAX_STAGE_BYTES) or stages == 1


@pytest.mark.parametrize(("target", "M", "N", "K", "aligned", "want"), [
    # an aligned N-major B of few column tiles: half as wide, twice as deep, down to 32 columns, pipelined at any
    # stage size (session 29, H200: fp32 1x1025x304 0.50 -> 0.86x eager, 1x700x512 0.70 -> 1.25x)
    ("sm_90", 1, 304, 1025, True, (32, 128, 1, 3)),
    ("sm_90", 3, 1000, 800, True, (32, 32, 4, 3)),
    ("sm_90", 1, 304, 1025, False, (128, 32, 4, 1)),   # misaligned B: the tiles measured for it
    ("sm_90", 1, 4096, 4096, True, (128, 32, 16, 1)),  # wider than GEMV_NMAJOR_NARROW_MAX_N: unchanged
    ("gfx942", 1, 304, 1025, True, (128, 64, 2, 1)),   # AMD: not timed, unchanged
])
def test_gemv_narrows_its_tiles_for_a_small_aligned_n_major_b(target: str, M: int, N: int, K: int, aligned: bool,
                                                               want: tuple[int, int, int, int]) -> None:
    cfg = policy.gemv_config(policy.target_from_name(target), M, N, K, 4, False, 132 if target == "sm_90" else 304,
                             aligned)
    assert (cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["SPLIT_K"], cfg["STAGES"]) == want


def test_a_narrow_deep_pipelined_gemv_computes_the_same_product() -> None:
    # the narrowed tiles' shape (32 columns, 128 deep, 3 stages) over a ragged K and N, one row and three
    g = torch.Generator().manual_seed(29)
    for M, K, N in ((1, 301, 70), (3, 129, 33)):
        a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
        cfg = {"BLOCK_M": 1 if M == 1 else 4, "BLOCK_N": 32, "BLOCK_K": 128, "SPLIT_K": 1, "STAGES": 3}
        y = gemm.gemm(a, b, kernel="gemv", config=cfg)
        torch.testing.assert_close(y.double(), a.double() @ b.double(), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("lb", ["row", "odd"])
def test_a_pipelined_gemv_computes_the_same_product(lb: str) -> None:
    # STAGES only changes how the K loop is scheduled: ragged K and N, row chunks and a K split, against fp64
    g = torch.Generator().manual_seed(18)
    a = torch.randn(11, 45, generator=g)
    b = torch.randn(45, 37, generator=g) if lb == "row" else torch.randn(45, 38, generator=g)[:, 1:]
    cfg = {"BLOCK_M": 8, "BLOCK_N": 16, "BLOCK_K": 8, "SPLIT_K": 2}
    ref = a.double() @ b.double()
    for stages in (1, 3):
        y = gemm.gemm(a, b, kernel="gemv", config={**cfg, "STAGES": stages})
        torch.testing.assert_close(y.double(), ref, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="STAGES"):
        gemm.gemm(a, b, kernel="gemv", config={**cfg, "STAGES": 0})


def test_gemv_refusals_are_clear() -> None:
    a, b = torch.randn(9, 8), torch.randn(8, 8)
    with pytest.raises(ValueError, match=r"BLOCK_M must be a power of two in \[1, 8\]"):
        gemm.gemm(a, b, kernel="gemv", config={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16})
    with pytest.raises(ValueError, match="needs BLOCK_M, BLOCK_N and BLOCK_K"):
        gemm.gemm(a, b, kernel="gemv", config={"BLOCK_M": 2})
    with pytest.raises(ValueError, match="BLOCK_N must be a power of two in \\[16"):
        gemm.gemm(a[:4], b, kernel="gemv", config={"BLOCK_M": 4, "BLOCK_N": 8, "BLOCK_K": 16})
    with pytest.raises(ValueError, match="kernel must be one of"):
        gemm.gemm(a, b, kernel="gemm")


@pytest.mark.parametrize("arch", ["sm_90", "gfx942", "gfx1100"])
def test_gemv_policy_keeps_the_accumulator_small_and_fills_the_gpu(arch: str) -> None:
    t = policy.Target("cuda" if arch.startswith("sm") else "hip", arch, 64 if arch == "gfx942" else 32)
    for M in (1, 2, 3, 4, 5, 8):  # B in 16 bits
        for kmajor in (True, False):
            cfg = policy.gemv_config(t, M, 4096, 4096, 2, kmajor, 0)
            lanes = 64 if arch == "gfx942" else 32
            per_thread = cfg["BLOCK_M"] * cfg["BLOCK_N"] * cfg["BLOCK_K"] // (cfg["num_warps"] * lanes)
            assert cfg["BLOCK_M"] >= M and cfg["BLOCK_N"] >= 16 and per_thread <= policy_gemv.GEMV_ACC_PER_THREAD
            rdna = arch == "gfx1100"  # RDNA halves the K-major tile (16 KiB spilled there, compile-only)
            assert cfg["BLOCK_N"] * cfg["BLOCK_K"] * 2 <= policy_gemv.GEMV_TILE_BYTES // (2 if rdna and kmajor else 1)
            programs = -(-4096 // cfg["BLOCK_N"]) * cfg["SPLIT_K"]
            assert 4096 // (cfg["SPLIT_K"] * cfg["BLOCK_K"]) >= 4
            assert programs <= policy_gemv.GEMV_PROGRAMS_PER_CU * policy.DEFAULT_CUS[
                "cuda" if arch.startswith("sm") else "cdna" if arch == "gfx942" else "rdna"]
    # a short K keeps one pass; a long one splits; a wide grid splits only while each split keeps 12 K blocks
    assert policy.gemv_config(t, 1, 4096, 256, 2, True, 0)["SPLIT_K"] == 1
    assert policy.gemv_config(t, 1, 64, 14854, 4, True, 0)["SPLIT_K"] > 1
    if arch == "sm_90":
        assert policy.gemv_config(t, 2, 11660, 1068, 4, True, 132)["SPLIT_K"] == 1  # 8 blocks: 1.48x unsplit, 1.07x at 2
        assert policy.gemv_config(t, 1, 64, 14854, 4, True, 132)["BLOCK_N"] == 16  # 4 column tiles, not 2
    # A short K against a K-major weight: K blocks cut to K's power of two (16 at least), the columns kept, four times
    # as wide only where the block shrank more than 4x (session 23, H200: bf16 1x17x23227 B^T 0.39 -> 1.15x cuBLAS)
    for K in (1, 5, 9, 17, 33, 61, 100):
        cut, full = policy.gemv_config(t, 1, 23227, K, 2, True, 0), policy.gemv_config(t, 1, 23227, 4096, 2, True, 0)
        want = max(16, 1 << (K - 1).bit_length())
        assert cut["BLOCK_K"] == min(want, full["BLOCK_K"]) and cut["SPLIT_K"] == 1
        assert cut["BLOCK_N"] == full["BLOCK_N"] * max(1, full["BLOCK_K"] // cut["BLOCK_K"] // 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_reads_broadcast_operands(dtype: torch.dtype) -> None:
    # Stride-0 views (an expanded row of A, an expanded column of B) are read in place, as the tile kernel reads them.
    g = torch.Generator().manual_seed(2)
    a = torch.randn(1, 90, generator=g).to(dtype).expand(5, 90)
    b = (torch.randn(90, 1, generator=g) / 9).to(dtype).expand(90, 33)
    for kernel in ("gemv", "pointer"):
        assert_matches(gemm.gemm(a, b, kernel=kernel), gemm.reference(a, b, None, "none").to(dtype), dtype)


def test_a_gemv_config_runs_on_the_gemv_kernel_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # {"GEMV": True, ...}: what a tune-cache entry stores for the GEMV kernel (gemm_parts._gemv_candidates).
    spy = _Spy(gemm.gemv_kernel)
    monkeypatch.setattr(gemm, "gemv_kernel", spy)
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(12, 70, generator=g), torch.randn(70, 30, generator=g) / 8
    cfg = {"GEMV": True, "BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 16, "SPLIT_K": 2}
    assert_matches(gemm.gemm(a, b, config=cfg), gemm.reference(a, b, None, "none"), torch.float32)
    assert spy.calls and spy.calls[-1][1]["BLOCK_M"] == 4 and spy.calls[-1][1]["SPLIT_K"] == 2
    with pytest.raises(ValueError, match="GEMV must be True"):
        gemm.gemm(a, b, config={**cfg, "GEMV": 1})
    with pytest.raises(ValueError, match="unknown GEMV config keys"):
        gemm.gemm(a, b, config={**cfg, "GROUP_M": 8})
    with pytest.raises(ValueError, match="runs on the GEMV kernel"):
        gemm.gemm(a, b, config=cfg, kernel="pointer")


def test_a_tuned_gemv_entry_is_used_by_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    # tunecache.forced stands for a stored entry (lookups return it): "auto" runs the GEMV with its tiles even where
    # the rule would take the tile kernel (5 rows > the interpreter's 4), and a pointer entry keeps the tile kernel.
    from rocm_triton_doctor.kernels import tunecache

    spy = _Spy(gemm.gemv_kernel)
    monkeypatch.setattr(gemm, "gemv_kernel", spy)
    g = torch.Generator().manual_seed(6)
    a, b = torch.randn(5, 64, generator=g), torch.randn(64, 20, generator=g) / 8
    with tunecache.forced("gemm", {"GEMV": True, "BLOCK_M": 8, "BLOCK_N": 16, "BLOCK_K": 8, "SPLIT_K": 4}):
        assert_matches(gemm.gemm(a, b), gemm.reference(a, b, None, "none"), torch.float32)
    assert spy.calls and spy.calls[-1][1]["BLOCK_K"] == 8
    spy.calls.clear()
    with tunecache.forced("gemm", {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}):
        gemm.gemm(a[:1], b)
    assert not spy.calls


def test_tune_candidates_include_gemv_configs_where_the_gemv_may_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocm_triton_doctor.kernels import gemm_parts

    h100 = policy.Target("cuda", "sm_90", 32)
    monkeypatch.setattr(policy, "target_for_device", lambda device: h100)
    monkeypatch.setattr(gemm_parts, "device_cus", lambda dev: 132)

    def key(dtype: str, M: int, N: int, K: int, nmajor: bool) -> tuple:
        return (dtype, M, N, K, "none", False, "ieee", True, nmajor, False, True)

    fp32 = gemm_parts.tune_candidates(key("float32", 8, 11229, 2876, False))
    gv = [c for c in fp32 if c.get("GEMV")]
    assert len(gv) >= 3 and all(gemm_parts._checked_config(c) == c for c in gv)  # each passes the cache's validator
    assert any(not c.get("GEMV") for c in fp32)  # the tile kernel's candidates stay
    assert {c["SPLIT_K"] for c in gv} >= {policy.gemv_config(h100, 8, 11229, 2876, 4, True, 132)["SPLIT_K"]}
    assert any(c.get("GEMV") for c in gemm_parts.tune_candidates(key("float32", 89, 1577, 589, False)))
    assert not any(c.get("GEMV") for c in gemm_parts.tune_candidates(key("bfloat16", 12, 4096, 4096, False)))
    assert not any(c.get("GEMV") for c in gemm_parts.tune_candidates(key("float32", 200, 4096, 4096, True)))
