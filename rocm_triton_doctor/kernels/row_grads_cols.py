"""Many wide rows in the norm backwards (RMSNorm, LayerNorm): the row sums, then column tiles — three launches.

The backward kernel of row_grads.py gives a row too wide for one block to one program, which walks it twice (the
row's sums, then ∂x) and adds the row's parameter-gradient terms into its own fp32 partial row (a read-add-write of
N fp32 a row); two such programs an SM keep few loads in flight: LayerNorm fp16 5296x22213 backward at 0.53x eager
autograd's on an H200 (session 31's backward hunt, docs/measurements/2026-11-29-h200-s31-bwd-hunt4.json), bf16
3596x29822 at 0.52x (session 30's norm-wide probe).

Here (OP 1 RMSNorm, 2 LayerNorm, as row_grads_split.py):
1. row_grads_split.row_grad_dot_kernel with one part a row: each row's sums (RMSNorm Σ w·dy·x; LayerNorm Σ w·dy·x̂
   and Σ w·dy), fp32, one program a row;
2. row_grad_cols_kernel: a program owns BLOCK_N columns of a range of RPP rows and walks the rows, writing ∂x from
   the row's sums and keeping its columns' parameter terms (dy·x·r; dy·x̂ and dy) in registers — no reduction across
   the columns, so the loads of consecutive rows are independent — then writes them as its partial row;
3. row_grads.param_sums over the G partial rows.
x and dy are read twice (as in the looped kernel), the partial rows are G·N fp32 instead of a read and a write of N a
row. Same arithmetic as the looped kernels."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, cdiv
from rocm_triton_doctor.kernels.launch import launch
from rocm_triton_doctor.kernels.row_grads_split import row_grad_dot_kernel


@triton.jit
def row_grad_cols_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, ws_ptr, dx_ptr, dwp_ptr, dbp_ptr, M, N, sw, RPP,
                         OP: tl.constexpr, BLOCK_N: tl.constexpr):
    """∂x of rows [g·RPP, (g+1)·RPP) in columns [c·BLOCK_N, (c+1)·BLOCK_N) for program (c, g), from each row's sums in
    ws (ws[row], and ws[M + row] for LayerNorm), and the columns' parameter terms summed over those rows into row g of
    dwp (and dbp)."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m = cols < N
    g = tl.program_id(1)
    first = g * RPP
    n_rows = tl.minimum(RPP, M - first)
    w = tl.load(w_ptr + cols.to(tl.int64) * sw, mask=m, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    db = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for i in range(0, n_rows):
        row = (first + i).to(tl.int64)
        base = row * N
        r = tl.load(rstd_ptr + row)
        s1 = tl.load(ws_ptr + row)
        dy = tl.load(dy_ptr + base + cols, mask=m, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(tl.float32)
        if OP == 1:
            dx = r * w * dy - x * (s1 * r * r * r / N)
            dw += dy * x * r
        else:
            mu = tl.load(mean_ptr + row)
            s2 = tl.load(ws_ptr + M + row)
            xh = (x - mu) * r
            dx = r * (w * dy - s2 / N - xh * (s1 / N))
            dw += dy * xh
            db += dy
        tl.store(dx_ptr + base + cols, dx.to(dx_ptr.dtype.element_ty), mask=m)
    part = g.to(tl.int64) * N + cols
    tl.store(dwp_ptr + part, dw, mask=m)
    if OP == 2:
        tl.store(dbp_ptr + part, db, mask=m)


# Column tiles: BLOCK_N lanes a program at COLS_WARPS warps; programs enough for COLS_PROGRAMS_PER_UNIT a unit while
# each walks at least COLS_MIN_ROWS rows (its partial row is then under 1/COLS_MIN_ROWS of its rows' bytes).
# H200, the looped rows of the norm-wide probe (…-s31-probe-norm-wide.json, -wide3.json), x eager's backward, before
# (one program a row) -> 1024 lanes at 4 / 8 warps: LayerNorm bf16 3596x29822 0.51 -> 1.13 / 1.01, fp16 5296x22213
# 0.53 -> 1.10 / 1.13, fp16 65x49044 0.70 -> 2.09 / 2.34, fp32 1000x40000 0.61 -> 1.09 / 1.30, bf16 256x131072
# 0.82 -> 3.18 / 3.28; RMSNorm bf16 4096x32768 6.01 -> 9.60 / 9.87. 512 or 2048 lanes, 8 programs a unit: no better.
COLS_BLOCK = 1024
COLS_WARPS = 8
COLS_PROGRAMS_PER_UNIT = 4
COLS_MIN_ROWS = 16
# LayerNorm rows in one block from this width take the tiles too, on NVIDIA: its one-block backward keeps w and both
# parameter sums for every lane in registers. H200, backward alone x eager autograd's, one block -> tiles
# (benchmarks/backward_probe.py --set norm-wide, docs/measurements/2026-11-29-h200-s31-probe-norm-wide3.json): bf16
# 1061x12897 0.41 -> 1.28, 4096x16384 1.05 -> 1.30, fp32 2000x12000 0.98 -> 1.23; at 8192 and below the block stayed
# ahead (bf16 8192x8192 1.66 against 1.41, fp32 4096x6000 1.67 against 1.28, bf16 16384x2560 1.39 against 1.07), as
# did RMSNorm's (fp32 2000x12000 6.47 against 5.32; bf16 8192x4096 14.2 against 9.9; 16-bit rows of 10240-16384,
# …-s31-probe-norm-one-block.json: bf16 4096x16384 13.66 against 9.92): RMSNorm's looped rows only.
# Fewer rows were not timed (the block's plan keeps their host time lower: two planned launches, not three).
BLOCK_MIN_N = {2: 8193}  # OP -> the width from which its rows in one block take the tiles (NVIDIA)
BLOCK_MIN_ROWS = 1024


def takes(cfg: dict[str, Any], M: int, N: int, op: int, backend: str) -> bool:
    """Whether the norm backward (OP 1 RMSNorm, 2 LayerNorm) of (M, N) rows under the row backward's cfg takes the
    column tiles: looped rows, and on NVIDIA rows in one block from BLOCK_MIN_N[op] wide (LayerNorm's) and
    BLOCK_MIN_ROWS rows."""
    if cfg["LOOPED"]:
        return True
    min_n = BLOCK_MIN_N.get(op)
    return backend == "cuda" and min_n is not None and min_n <= N and M >= BLOCK_MIN_ROWS


def cols_config(N: int, M: int, units: int) -> dict[str, Any]:
    """BLOCK_N, the rows a program walks (RPP) and its warps for (M, N) rows on `units` SMs/CUs."""
    blocks = cdiv(N, COLS_BLOCK)
    groups = max(1, min(cdiv(COLS_PROGRAMS_PER_UNIT * units, blocks), M // COLS_MIN_ROWS))
    return {"BLOCK_N": COLS_BLOCK, "RPP": cdiv(M, groups), "num_warps": COLS_WARPS}


def cols_backward(op: int, dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor | None,
                  rstd: torch.Tensor, dx: torch.Tensor, cfg: dict[str, Any], units: int) -> tuple[torch.Tensor, ...]:
    """∂x into dx for contiguous (M, N) dy and x; returns the (G, N) fp32 partial rows of each parameter gradient
    (OP 1 RMSNorm: ∂w; OP 2 LayerNorm: ∂w, ∂b) for row_grads.param_sums. cfg: the row backward's (BLOCK for the
    sums' chunks and its compiler options)."""
    M, N = x.shape
    block = int(cfg["BLOCK"])
    ws = torch.empty((2, M), dtype=torch.float32, device=x.device)
    opts = {k: v for k, v in cfg.items() if k not in ("BLOCK", "ROWS", "LOOPED")}
    stats = (mean if mean is not None else ws, rstd)
    launch(row_grad_dot_kernel, (M, 1), dy, x, weight, *stats, ws, N, weight.stride(0), OP=op,
           CHUNKS=cdiv(N, block), BLOCK=block, **opts)
    ccfg = dict(cols_config(N, M, units))
    rpp = ccfg.pop("RPP")
    groups = cdiv(M, rpp)
    parts = tuple(torch.empty((groups, N), dtype=torch.float32, device=x.device) for _ in range(op))
    launch(row_grad_cols_kernel, (cdiv(N, ccfg["BLOCK_N"]), groups), dy, x, weight, *stats, ws, dx, parts[0],
           parts[-1], M, N, weight.stride(0), rpp, OP=op, **ccfg)
    return parts


def cols_aot(name: str, op: int, target: policy.Target) -> list[AotSpec]:
    """Compile-only config of the column tiles for bf16 rows (the policy's BLOCK_N and warps)."""
    ptrs = {"dy_ptr": "*bf16", "x_ptr": "*bf16", "w_ptr": "*bf16", "mean_ptr": "*fp32", "rstd_ptr": "*fp32",
            "ws_ptr": "*fp32", "dx_ptr": "*bf16", "dwp_ptr": "*fp32", "dbp_ptr": "*fp32"}
    sig = {**ptrs, "M": "i32", "N": "i32", "sw": "i32", "RPP": "i32"}
    return [AotSpec(f"{name} backward bf16 (column tiles)", row_grad_cols_kernel, sig,
                    {"OP": op, "BLOCK_N": COLS_BLOCK}, {"num_warps": COLS_WARPS})]
