"""Few wide rows (softmax, RMSNorm and LayerNorm): each row split over SPLIT programs, in two launches.

A looped row kernel gives each row to one program, so a decode step's softmax over the vocabulary (1-8 rows of
32k-262k) or a norm over a few long rows ran on as many SMs as there are rows and left the rest of the GPU idle
(rmsnorm fp16 6x288582 row-strided: 0.74x eager on an H200, `smoke --preset random --seed 22`,
docs/measurements/2026-11-27-h200-s12-random22.json). Here a row's columns are cut into SPLIT parts of CHUNKS whole
BLOCK-wide chunks (a constexpr: Triton 3.6's interpreter cannot loop to a run-time bound): the stats launch gives
each (row, part) program its part's statistics (softmax: the part's max
and its sum of exp relative to that max; RMSNorm: its sum of squares) in an fp32 workspace; the normalise launch
gives each (row, part) program the row's statistics from all parts (softmax merges them as the looped kernel merges
its chunks) and its own part to write. x is read twice, as in the looped kernels. policy.row_split says how many
parts; rows.prepare takes them only where the second launch's host time is hidden (see ROW_SPLIT_EAGER_MIN_COLS).
The per-element arithmetic is the looped kernels': exp2 of log2(e)-scaled values, fp32, the same -inf/NaN rules."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.base import AotSpec, cdiv
from rocm_triton_doctor.kernels.common import fold_offset
from rocm_triton_doctor.kernels.launch import launch

LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)


@triton.jit
def _part(N, D1, D2, s0, s1, s2, PART: tl.constexpr, DIV: tl.constexpr):
    """This program's row (program_id 0), its start offset in elements (up to three folded leading dims, as
    rows.row_offsets), and its part's columns [lo, hi) (PART = CHUNKS·BLOCK). The strides arrive divided by DIV
    (rows.vector_div)."""
    row = tl.program_id(0).to(tl.int64)
    xrow = fold_offset(row, D1, D2, s0 * DIV, s1 * DIV, s2 * DIV)
    lo = tl.program_id(1).to(tl.int64) * PART
    hi = tl.minimum(lo + PART, N)
    return row, xrow, lo, hi


@triton.jit
def softmax_stats_kernel(x_ptr, wm_ptr, ws_ptr, N, D1, D2, s0, s1, s2, sn, CHUNKS: tl.constexpr, BLOCK: tl.constexpr,
                         DIV: tl.constexpr = 1):
    """wm[row, part] = the part's max, ws[row, part] = sum(exp(x - that max)) (fp32, (M, SPLIT) contiguous)."""
    N = N * DIV
    row, xrow, lo, hi = _part(N, D1, D2, s0, s1, s2, CHUNKS * BLOCK, DIV)
    cols = tl.arange(0, BLOCK)
    # Per-lane running max and sum (one reduction after the loop): a lane whose values so far are all -inf keeps
    # max -inf and shifts by 0, so exp gives 0 and not NaN.
    mx = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    sm = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        x = tl.load(x_ptr + xrow + c * sn, mask=c < hi, other=-float("inf"), eviction_policy="evict_last")
        x = x.to(tl.float32)
        new = tl.maximum(mx, x)
        shift = tl.where(new == -float("inf"), 0.0, new)
        sm = sm * tl.exp2((mx - shift) * LOG2E) + tl.exp2((x - shift) * LOG2E)
        mx = new
    m = tl.max(mx, axis=0)
    shift = tl.where(m == -float("inf"), 0.0, m)
    s = tl.sum(sm * tl.exp2((mx - shift) * LOG2E), axis=0)
    k = row * tl.num_programs(1) + tl.program_id(1)
    tl.store(wm_ptr + k, m)
    tl.store(ws_ptr + k, s)


@triton.jit
def softmax_norm_kernel(x_ptr, wm_ptr, ws_ptr, out_ptr, N, D1, D2, s0, s1, s2, sn, CHUNKS: tl.constexpr, BLOCK: tl.constexpr,
                        PARTS: tl.constexpr, DIV: tl.constexpr = 1):
    """The row's max and sum from its SPLIT parts (PARTS: SPLIT padded to a power of two), then this part's outputs
    exp(x - max) / sum; the output is contiguous."""
    N = N * DIV
    row, xrow, lo, hi = _part(N, D1, D2, s0, s1, s2, CHUNKS * BLOCK, DIV)
    nparts = tl.num_programs(1)
    p = tl.arange(0, PARTS)
    pm = tl.load(wm_ptr + row * nparts + p, mask=p < nparts, other=-float("inf"))
    ps = tl.load(ws_ptr + row * nparts + p, mask=p < nparts, other=0.0)
    m = tl.max(pm, axis=0)
    shift = tl.where(m == -float("inf"), 0.0, m)
    inv = 1.0 / tl.sum(ps * tl.exp2((pm - shift) * LOG2E), axis=0)
    cols = tl.arange(0, BLOCK)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        x = tl.load(x_ptr + xrow + c * sn, mask=c < hi, other=-float("inf"), eviction_policy="evict_first")
        y = tl.exp2((x.to(tl.float32) - shift) * LOG2E) * inv
        tl.store(out_ptr + row * N + c, y.to(out_ptr.dtype.element_ty), mask=c < hi)


@triton.jit
def rmsnorm_stats_kernel(x_ptr, wq_ptr, N, D1, D2, s0, s1, s2, sn, CHUNKS: tl.constexpr, BLOCK: tl.constexpr, DIV: tl.constexpr = 1):
    """wq[row, part] = the part's sum of squares (fp32, (M, SPLIT) contiguous)."""
    N = N * DIV
    row, xrow, lo, hi = _part(N, D1, D2, s0, s1, s2, CHUNKS * BLOCK, DIV)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        x = tl.load(x_ptr + xrow + c * sn, mask=c < hi, other=0.0, eviction_policy="evict_last").to(tl.float32)
        acc += x * x
    tl.store(wq_ptr + row * tl.num_programs(1) + tl.program_id(1), tl.sum(acc, axis=0))


@triton.jit
def rmsnorm_norm_kernel(x_ptr, w_ptr, wq_ptr, out_ptr, N, D1, D2, s0, s1, s2, sn, sw, eps, CHUNKS: tl.constexpr, BLOCK: tl.constexpr,
                        PARTS: tl.constexpr, DIV: tl.constexpr = 1, rstd_ptr=None, STATS: tl.constexpr = False):
    """rstd from the row's SPLIT sums of squares, then this part's outputs x·rstd·w; STATS: part 0 stores the row's
    fp32 rstd for the backward."""
    N = N * DIV
    row, xrow, lo, hi = _part(N, D1, D2, s0, s1, s2, CHUNKS * BLOCK, DIV)
    nparts = tl.num_programs(1)
    p = tl.arange(0, PARTS)
    total = tl.sum(tl.load(wq_ptr + row * nparts + p, mask=p < nparts, other=0.0), axis=0)
    rstd = 1.0 / tl.sqrt(total / N + eps)
    if STATS:  # noqa: SIM102 - a compile-time test around a run-time one
        if tl.program_id(1) == 0:
            tl.store(rstd_ptr + row, rstd)
    cols = tl.arange(0, BLOCK)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        x = tl.load(x_ptr + xrow + c * sn, mask=c < hi, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + c * sw, mask=c < hi, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * N + c, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=c < hi)


@triton.jit
def _ln_shift(x_ptr, xrow):
    """The row's first element, the looped LayerNorm kernel's shift (below 2^60; 0 past it)."""
    shift = tl.load(x_ptr + xrow).to(tl.float32)
    return tl.where(tl.abs(shift) < 1.152921504606847e18, shift, 0.0)


@triton.jit
def layernorm_stats_kernel(x_ptr, wmu_ptr, wm2_ptr, N, D1, D2, s0, s1, s2, sn, CHUNKS: tl.constexpr, BLOCK: tl.constexpr,
                           DIV: tl.constexpr = 1):
    """wmu[row, part] = the mean of the part's x - shift, wm2[row, part] = its sum of squared deviations from that
    mean; chunk by chunk with the looped kernel's update (Chan et al.), fp32, (M, SPLIT) contiguous."""
    N = N * DIV
    row, xrow, lo, hi = _part(N, D1, D2, s0, s1, s2, CHUNKS * BLOCK, DIV)
    shift = _ln_shift(x_ptr, xrow)
    cols = tl.arange(0, BLOCK)
    mean = 0.0
    m2 = 0.0
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        m = c < hi
        x = tl.load(x_ptr + xrow + c * sn, mask=m, other=0.0, eviction_policy="evict_last").to(tl.float32)
        x = tl.where(m, x - shift, 0.0)
        nb = tl.maximum(tl.minimum(hi - (lo + i * BLOCK), BLOCK), 0).to(tl.float32)
        bmean = tl.sum(x, axis=0) / tl.maximum(nb, 1.0)
        d = tl.where(m, x - bmean, 0.0)
        seen = (i * BLOCK) * 1.0
        total = tl.maximum(seen + nb, 1.0)
        delta = bmean - mean
        mean = mean + delta * (nb / total)
        m2 = m2 + tl.sum(d * d, axis=0) + (delta * (seen * nb / total)) * delta
    k = row * tl.num_programs(1) + tl.program_id(1)
    tl.store(wmu_ptr + k, mean)
    tl.store(wm2_ptr + k, m2)


@triton.jit
def layernorm_norm_kernel(x_ptr, w_ptr, b_ptr, wmu_ptr, wm2_ptr, out_ptr, N, D1, D2, s0, s1, s2, sn, sw, sb, eps,
                          CHUNKS: tl.constexpr, BLOCK: tl.constexpr, PARTS: tl.constexpr, DIV: tl.constexpr = 1,
                          mean_ptr=None, rstd_ptr=None, STATS: tl.constexpr = False):
    """The row's mean and variance from its parts' (mean, M2) (the parallel update over all parts at once: mean =
    Σ n·mean_p / N, M2 = Σ M2_p + Σ n·(mean_p - mean)²), then this part's outputs ((x - shift) - mean)·rstd·w + b;
    STATS: part 0 stores the row's fp32 mean and rstd for the backward."""
    N = N * DIV
    PART: tl.constexpr = CHUNKS * BLOCK
    row, xrow, lo, hi = _part(N, D1, D2, s0, s1, s2, PART, DIV)
    shift = _ln_shift(x_ptr, xrow)
    nparts = tl.num_programs(1)
    p = tl.arange(0, PARTS)
    pmask = p < nparts
    n = tl.where(pmask, tl.minimum(N - p.to(tl.int64) * PART, PART), 0).to(tl.float32)
    pmu = tl.load(wmu_ptr + row * nparts + p, mask=pmask, other=0.0)
    pm2 = tl.load(wm2_ptr + row * nparts + p, mask=pmask, other=0.0)
    mean = tl.sum(n * pmu, axis=0) / N
    dm = tl.where(pmask, pmu - mean, 0.0)
    m2 = tl.sum(pm2, axis=0) + tl.sum(n * dm * dm, axis=0)
    rstd = 1.0 / tl.sqrt(m2 / N + eps)
    if STATS:  # noqa: SIM102 - a compile-time test around a run-time one
        if tl.program_id(1) == 0:
            tl.store(mean_ptr + row, mean + shift)
            tl.store(rstd_ptr + row, rstd)
    cols = tl.arange(0, BLOCK)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        x = tl.load(x_ptr + xrow + c * sn, mask=c < hi, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + c * sw, mask=c < hi, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + c * sb, mask=c < hi, other=0.0).to(tl.float32)
        y = ((x - shift) - mean) * rstd * w + b
        tl.store(out_ptr + row * N + c, y.to(out_ptr.dtype.element_ty), mask=c < hi)


def chunks_per_part(N: int, block: int, split: int) -> int:
    """BLOCK-wide chunks a part covers: the row's chunks shared over `split` parts, rounded up."""
    return cdiv(cdiv(N, block), split)


def parts(N: int, block: int, split: int) -> int:
    """The parts that hold columns (chunks_per_part rounds up, so fewer than `split` may be needed)."""
    return cdiv(cdiv(N, block), chunks_per_part(N, block, split))


# ---- host side ----------------------------------------------------------------------------------------------------

def _grid_and_part(L: Any) -> tuple[tuple[int, int], int, int]:
    """The (rows, parts) grid, CHUNKS a part and the parts padded to a power of two (the normalise kernel's vector)."""
    block = L.cfg["BLOCK"]
    n_parts = parts(L.N, block, L.split)
    return (L.M, n_parts), chunks_per_part(L.N, block, L.split), 1 << max(0, (n_parts - 1).bit_length())


def _opts(L: Any) -> dict[str, Any]:
    return {k: v for k, v in L.cfg.items() if k not in ("BLOCK", "ROWS", "LOOPED")}


def softmax_split(x: torch.Tensor, L: Any) -> None:
    """softmax over L's rows in two launches (rows.RowLaunch with split > 1)."""
    grid, chunks, pw = _grid_and_part(L)
    wm, ws = torch.empty((2, *grid), dtype=torch.float32, device=x.device)  # one allocation: host time
    rest = L.args[1:]  # (N, D1, D2, s0, s1, s2, sn), strides divided by DIV
    kw = {"CHUNKS": chunks, "BLOCK": L.cfg["BLOCK"], "DIV": L.div, **_opts(L)}
    launch(softmax_stats_kernel, grid, x, wm, ws, *rest, **kw)
    launch(softmax_norm_kernel, grid, x, wm, ws, L.out, *rest, PARTS=pw, **kw)


def rmsnorm_split(x: torch.Tensor, weight: torch.Tensor, eps: float, L: Any, rstd: torch.Tensor | None) -> None:
    """RMSNorm over L's rows in two launches; rstd (M,) fp32 filled when given (the backward's statistics)."""
    grid, chunks, pw = _grid_and_part(L)
    wq = torch.empty(grid, dtype=torch.float32, device=x.device)
    rest = L.args[1:]
    kw = {"CHUNKS": chunks, "BLOCK": L.cfg["BLOCK"], "DIV": L.div, **_opts(L)}
    launch(rmsnorm_stats_kernel, grid, x, wq, *rest, **kw)
    launch(rmsnorm_norm_kernel, grid, x, weight, wq, L.out, *rest, weight.stride(0), eps, PARTS=pw, rstd_ptr=rstd,
           STATS=rstd is not None, **kw)


def layernorm_split(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float, L: Any,
                    mean: torch.Tensor | None, rstd: torch.Tensor | None) -> None:
    """LayerNorm over L's rows in two launches; mean and rstd (M,) fp32 filled when given (the backward's)."""
    grid, chunks, pw = _grid_and_part(L)
    wmu, wm2 = torch.empty((2, *grid), dtype=torch.float32, device=x.device)
    rest = L.args[1:]
    kw = {"CHUNKS": chunks, "BLOCK": L.cfg["BLOCK"], "DIV": L.div, **_opts(L)}
    launch(layernorm_stats_kernel, grid, x, wmu, wm2, *rest, **kw)
    launch(layernorm_norm_kernel, grid, x, weight, bias, wmu, wm2, L.out, *rest, weight.stride(0), bias.stride(0), eps,
           PARTS=pw, mean_ptr=mean, rstd_ptr=rstd, STATS=rstd is not None, **kw)


def split_aot(name: str, target: Any) -> list[AotSpec]:
    """Compile-only configs of `name` ("softmax", "rmsnorm" or "layernorm"): an fp32 vocabulary row of 152064 split over several
    programs, both launches."""
    from rocm_triton_doctor.kernels import policy

    cfg = policy.row_config(target, 152064, 4, 1)
    opts = {k: v for k, v in cfg.items() if k not in ("BLOCK", "ROWS")}
    rest = {"N": "i32", "s0": "i32", "s1": "i32", "s2": "i32"}
    const = {"BLOCK": cfg["BLOCK"], "DIV": 1, "sn": 1, "D1": 1, "D2": 1, "CHUNKS": 1}
    f32 = "*fp32"
    label = f"{name} split rows fp32 N=152064"
    if name == "softmax":
        return [AotSpec(f"{label} (stats)", softmax_stats_kernel, {"x_ptr": f32, "wm_ptr": f32, "ws_ptr": f32, **rest},
                        const, opts),
                AotSpec(f"{label} (normalise)", softmax_norm_kernel,
                        {"x_ptr": f32, "wm_ptr": f32, "ws_ptr": f32, "out_ptr": f32, **rest}, {**const, "PARTS": 32},
                        opts)]
    if name == "layernorm":
        return [AotSpec(f"{label} (stats)", layernorm_stats_kernel, {"x_ptr": f32, "wmu_ptr": f32, "wm2_ptr": f32,
                                                                     **rest}, const, opts),
                AotSpec(f"{label} (normalise)", layernorm_norm_kernel,
                        {"x_ptr": f32, "w_ptr": f32, "b_ptr": f32, "wmu_ptr": f32, "wm2_ptr": f32, "out_ptr": f32,
                         "eps": "fp32", "mean_ptr": f32, "rstd_ptr": f32, **rest},
                        {**const, "PARTS": 32, "sw": 1, "sb": 1, "STATS": True}, opts)]
    return [AotSpec(f"{label} (stats)", rmsnorm_stats_kernel, {"x_ptr": f32, "wq_ptr": f32, **rest}, const, opts),
            AotSpec(f"{label} (normalise)", rmsnorm_norm_kernel,
                    {"x_ptr": f32, "w_ptr": f32, "wq_ptr": f32, "out_ptr": f32, "eps": "fp32", "rstd_ptr": f32,
                     **rest}, {**const, "PARTS": 32, "sw": 1, "STATS": True}, opts)]
