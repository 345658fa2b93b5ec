"""Few wide rows in the row backwards (softmax, RMSNorm, LayerNorm): each row split over SPLIT programs, two launches.

The backward kernels (row_grads.py) give a looped row to one program, which walks it twice: over a handful of rows
(a decode step's vocabulary softmax, a norm over a few long rows) most SMs sat idle — RMSNorm fp32 3x164034 forward +
backward at 0.37x eager on an H200, 1x135196 at 0.40x (session 30's backward hunt,
docs/measurements/2026-11-29-h200-s30-bwd-hunt1.json). As the forward's split (rows_split.py), a row's columns are cut
into parts of CHUNKS whole BLOCK-wide chunks: the dot launch gives each (row, part) program its part's sums
(softmax Σ dy·y; RMSNorm Σ w·dy·x; LayerNorm Σ w·dy·x̂ and Σ w·dy) in an fp32 workspace, and the apply launch gives
each program the row's sums from all parts and its own part's ∂x to write, with the parameter gradients' terms of
its columns (dy·x·r; dy·x̂ and dy) stored in row `row` of the (M, N) fp32 partial buffers the caller sums over rows.
Same arithmetic as the looped kernels; x and dy are read twice, as there. OP: 0 softmax (a = y), 1 RMSNorm,
2 LayerNorm (a = x). policy.row_split says how many parts, as for the forward.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec
from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.rows_split import chunks_per_part, parts


@triton.jit
def row_grad_dot_kernel(dy_ptr, a_ptr, w_ptr, mean_ptr, rstd_ptr, ws_ptr, N, sw, OP: tl.constexpr,
                        CHUNKS: tl.constexpr, BLOCK: tl.constexpr):
    """ws[0, row, part] (and ws[1, row, part] for LayerNorm): the part's sums, fp32, (2, M, SPLIT) contiguous."""
    row = tl.program_id(0).to(tl.int64)
    lo = tl.program_id(1).to(tl.int64) * (CHUNKS * BLOCK)
    hi = tl.minimum(lo + CHUNKS * BLOCK, N)
    base = row * N
    cols = tl.arange(0, BLOCK)
    acc1 = tl.zeros((BLOCK,), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    if OP == 2:
        mu = tl.load(mean_ptr + row)
        r = tl.load(rstd_ptr + row)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        m = c < hi
        dy = tl.load(dy_ptr + base + c, mask=m, other=0.0, eviction_policy="evict_last").to(tl.float32)
        a = tl.load(a_ptr + base + c, mask=m, other=0.0, eviction_policy="evict_last").to(tl.float32)
        if OP == 0:
            acc1 += dy * a
        else:
            w = tl.load(w_ptr + c * sw, mask=m, other=0.0).to(tl.float32)
            if OP == 1:
                acc1 += w * dy * a
            else:
                xh = tl.where(m, (a - mu) * r, 0.0)
                acc1 += w * dy * xh
                acc2 += w * dy
    k = row * tl.num_programs(1) + tl.program_id(1)
    tl.store(ws_ptr + k, tl.sum(acc1, axis=0))
    if OP == 2:
        tl.store(ws_ptr + tl.num_programs(0) * tl.num_programs(1) + k, tl.sum(acc2, axis=0))


@triton.jit
def row_grad_apply_kernel(dy_ptr, a_ptr, w_ptr, mean_ptr, rstd_ptr, ws_ptr, dx_ptr, dwp_ptr, dbp_ptr, N, sw,
                          OP: tl.constexpr, CHUNKS: tl.constexpr, BLOCK: tl.constexpr, PARTS: tl.constexpr):
    """The row's sums from its parts (PARTS: the parts padded to a power of two), then this part's ∂x and, for the
    norms, its columns' parameter-gradient terms in row `row` of dwp (and dbp)."""
    row = tl.program_id(0).to(tl.int64)
    nparts = tl.num_programs(1)
    lo = tl.program_id(1).to(tl.int64) * (CHUNKS * BLOCK)
    hi = tl.minimum(lo + CHUNKS * BLOCK, N)
    base = row * N
    p = tl.arange(0, PARTS)
    s1 = tl.sum(tl.load(ws_ptr + row * nparts + p, mask=p < nparts, other=0.0), axis=0)
    s2 = 0.0
    mu = 0.0
    r = 0.0
    if OP == 2:
        s2 = tl.sum(tl.load(ws_ptr + tl.num_programs(0) * nparts + row * nparts + p, mask=p < nparts, other=0.0),
                    axis=0)
        mu = tl.load(mean_ptr + row)
    if OP != 0:
        r = tl.load(rstd_ptr + row)
    cols = tl.arange(0, BLOCK)
    for i in range(CHUNKS):
        c = lo + i * BLOCK + cols
        m = c < hi
        dy = tl.load(dy_ptr + base + c, mask=m, other=0.0).to(tl.float32)
        a = tl.load(a_ptr + base + c, mask=m, other=0.0).to(tl.float32)
        if OP == 0:
            dx = a * (dy - s1)
        else:
            w = tl.load(w_ptr + c * sw, mask=m, other=0.0).to(tl.float32)
            if OP == 1:
                dx = r * w * dy - a * (s1 * r * r * r / N)
                tl.store(dwp_ptr + base + c, dy * a * r, mask=m)
            else:
                xh = (a - mu) * r
                dx = r * (w * dy - s2 / N - xh * (s1 / N))
                tl.store(dwp_ptr + base + c, dy * xh, mask=m)
                tl.store(dbp_ptr + base + c, dy, mask=m)
        tl.store(dx_ptr + base + c, dx.to(dx_ptr.dtype.element_ty), mask=m)


def split_backward(op: int, dy: torch.Tensor, a: torch.Tensor, weight: torch.Tensor | None, mean: torch.Tensor | None,
                   rstd: torch.Tensor | None, dx: torch.Tensor, dwp: torch.Tensor | None, dbp: torch.Tensor | None,
                   split: int, cfg: dict[str, object]) -> None:
    """∂x into dx (and the parameter terms into dwp, dbp: (M, N) fp32) for contiguous (M, N) dy and a (y for softmax,
    x for the norms), each row in `split` parts of cfg's BLOCK-wide chunks."""
    M, N = a.shape
    block = int(cfg["BLOCK"])  # type: ignore[call-overload]
    n_parts = parts(N, block, split)
    chunks = chunks_per_part(N, block, split)
    grid = (M, n_parts)
    ws = torch.empty((2, M, n_parts), dtype=torch.float32, device=a.device)
    opts = {k: v for k, v in cfg.items() if k not in ("BLOCK", "ROWS", "LOOPED")}
    w = weight if weight is not None else dx  # unread where OP == 0 (a pointer is still passed)
    sw = weight.stride(0) if weight is not None else 0
    stats = (mean if mean is not None else ws, rstd if rstd is not None else ws)
    launch(row_grad_dot_kernel, grid, dy, a, w, *stats, ws, N, sw, OP=op, CHUNKS=chunks, BLOCK=block, **opts)
    launch(row_grad_apply_kernel, grid, dy, a, w, *stats, ws, dx, dwp if dwp is not None else dx,
           dbp if dbp is not None else dx, N, sw, OP=op, CHUNKS=chunks, BLOCK=block,
           PARTS=1 << max(0, (n_parts - 1).bit_length()), **opts)


def split_aot(name: str, op: int, target: policy.Target) -> list[AotSpec]:
    """Compile-only configs of both launches for a bf16 row of 152064 in 8 parts (the policy's chunks and warps)."""
    cfg = dict(policy.row_config(target, 152064, 2, 1))
    block = cfg.pop("BLOCK")
    cfg.pop("ROWS", None)
    chunks = chunks_per_part(152064, block, 8)
    ptrs = {"dy_ptr": "*bf16", "a_ptr": "*bf16", "w_ptr": "*bf16" if op else "*fp32", "mean_ptr": "*fp32",
            "rstd_ptr": "*fp32", "ws_ptr": "*fp32"}
    const = {"OP": op, "CHUNKS": chunks, "BLOCK": block}
    dot = AotSpec(f"{name} backward bf16 N=152064 (split, sums)", row_grad_dot_kernel, {**ptrs, "N": "i32", "sw": "i32"},
                  const, cfg)
    out = {"dx_ptr": "*bf16", "dwp_ptr": "*fp32", "dbp_ptr": "*fp32"}
    apply = AotSpec(f"{name} backward bf16 N=152064 (split, apply)", row_grad_apply_kernel,
                    {**ptrs, **out, "N": "i32", "sw": "i32"}, {**const, "PARTS": 8}, cfg)
    return [dot, apply]
