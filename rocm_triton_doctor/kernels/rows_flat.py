"""Narrow contiguous rows read and written as one flat stretch of memory: the flat forms of the softmax, RMSNorm and
LayerNorm forwards for rows of up to a few hundred elements whose width is not a multiple of 16 bytes, and their
launch site (flat_site), as rows_window.py holds the window forms of wider such rows. Each flat kernel computes what
its op's plain kernel does (softmax.py, rmsnorm.py, layernorm.py) on a tile of R rows.

Why. The plain kernels pack several narrow rows into a program as a (ROWS, BLOCK) tile; a row of N elements, N not a
multiple of V = 16 / element size (an odd width in 16 bits, N % 4 != 0 in fp32), starts at a different offset within
a 16-byte group on each row, so the tile is read and written one element at a time (ld.global.b16 on sm_90). The
hunts' narrow odd rows of 64 MiB and more ran at 21-65 % of copy bandwidth on an H200 (seeds 18-21: softmax bf16
64322598x3 39 %, RMSNorm bf16 3610961x13 38 %, softmax fp32 777319x19 45 %, LayerNorm fp16 458059x150 64 %,
softmax fp16 209653x215 65 %).

How. A program's R rows of a contiguous x are the R·N elements from (program)·R·N: one stretch, whose start is a
multiple of R elements and so of V (R a power of two >= 8), read in whole 16-byte vectors (the mask j < R·N is
constant over each group of V: Triton proves it from R's divisibility). tl.gather (through shared memory) lays the
stretch out as the (R, W) tile the row math needs (W: N's power of two), and lays the results back out as a stretch,
stored the same way. The last program, which may hold fewer rows, takes the same path with an element-wise mask
(a runtime branch: every other program keeps the vector mask). The per-column parameters are read once a program.

When (policy_rows.flat_config, measured there; rows.prepare decides): contiguous rows (row stride N, unit column
stride) of such widths, on NVIDIA. Any alignment of x is correct: Triton's launch specialises the pointers, and an x
off a 16-byte boundary compiles to narrower loads.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.rows_split import LOG2E


@triton.jit
def flat_load(x_ptr, M, N, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr):
    """This program's rows of x (rows of N, contiguous) as an (R, W) tile of the values as stored (0 in lanes past a
    row and in rows past M), with: the lanes that hold the rows' elements, the row indices, which rows exist, and
    (start, full, n) for flat_store: the stretch's offset, whether the program holds R rows, its element count."""
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * R * N
    j = tl.arange(0, P)
    n = tl.minimum(M - pid * R, R) * N
    full = n == R * N
    if full:
        f = tl.load(x_ptr + start + j, mask=j < R * N, other=0.0)  # j < R·N: constant over V lanes, so vectors
    else:
        f = tl.load(x_ptr + start + j, mask=j < n, other=0.0)
    r = tl.arange(0, R)
    c = tl.arange(0, W)[None, :]
    inrow = (c < N) & (r[:, None] < R)
    tile = tl.gather(f, tl.reshape(tl.where(inrow, r[:, None] * N + c, 0), (R * W,)), 0)
    rows = pid.to(tl.int64) * R + r
    return tl.reshape(tile, (R, W)), inrow, rows, rows < M, start, full, n


@triton.jit
def flat_store(out_ptr, y, start, full, n, N, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr):
    """The (R, W) tile y (lanes past a row are not stored) back into the output's stretch at start: n elements,
    in whole vectors when the program is full."""
    j = tl.arange(0, P)
    row = j // N
    back = tl.where(j < R * N, row * W + (j - row * N), 0)
    v = tl.gather(tl.reshape(y.to(out_ptr.dtype.element_ty), (R * W,)), back, 0)
    if full:
        tl.store(out_ptr + start + j, v, mask=j < R * N)
    else:
        tl.store(out_ptr + start + j, v, mask=j < n)


@triton.jit
def flat_param(p_ptr, sp, N, W: tl.constexpr):
    """A per-column parameter (stride sp) as a (1, W) row, fp32, 0 past N."""
    c = tl.arange(0, W)
    return tl.load(p_ptr + c.to(tl.int64) * sp, mask=c < N, other=0.0).to(tl.float32)[None, :]


@triton.jit
def softmax_flat_kernel(x_ptr, out_ptr, M, N, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr):
    # R rows a program from one flat stretch (rows_flat.py); the math of softmax_kernel's single block.
    raw, inrow, rows, rmask, start, full, n = flat_load(x_ptr, M, N, R, W, P)
    x = tl.where(inrow, raw.to(tl.float32), -float("inf"))
    e = tl.exp2((x - tl.max(x, axis=1)[:, None]) * LOG2E)
    inv = 1.0 / tl.sum(e, axis=1)
    flat_store(out_ptr, e * inv[:, None], start, full, n, N, R, W, P)


@triton.jit
def rmsnorm_flat_kernel(x_ptr, w_ptr, out_ptr, M, N, sw, eps, R: tl.constexpr, W: tl.constexpr, P: tl.constexpr,
                        rstd_ptr=None, STATS: tl.constexpr = False):
    # R rows a program from one flat stretch (rows_flat.py); the math of rmsnorm_kernel's single block.
    raw, inrow, rows, rmask, start, full, n = flat_load(x_ptr, M, N, R, W, P)
    x = tl.where(inrow, raw.to(tl.float32), 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    if STATS:
        tl.store(rstd_ptr + rows, rstd, mask=rmask)
    flat_store(out_ptr, x * rstd[:, None] * flat_param(w_ptr, sw, N, W), start, full, n, N, R, W, P)


@triton.jit
def layernorm_flat_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, sw, sb, eps, R: tl.constexpr, W: tl.constexpr,
                          P: tl.constexpr, mean_ptr=None, rstd_ptr=None, STATS: tl.constexpr = False):
    # R rows a program from one flat stretch (rows_flat.py); the math of layernorm_kernel's single block, its
    # statistics of x minus the row's first element (within 2^60; layernorm.py says why).
    raw, inrow, rows, rmask, start, full, n = flat_load(x_ptr, M, N, R, W, P)
    x = raw.to(tl.float32)
    first = tl.sum(tl.where(tl.arange(0, W)[None, :] == 0, x, 0.0), axis=1)
    shift = tl.where(tl.abs(first) < 1.152921504606847e18, first, 0.0)
    x = tl.where(inrow, x - shift[:, None], 0.0)
    mean = tl.sum(x, axis=1) / N
    d = tl.where(inrow, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
    if STATS:
        tl.store(mean_ptr + rows, mean + shift, mask=rmask)
        tl.store(rstd_ptr + rows, rstd, mask=rmask)
    y = d * rstd[:, None] * flat_param(w_ptr, sw, N, W) + flat_param(b_ptr, sb, N, W)
    flat_store(out_ptr, y, start, full, n, N, R, W, P)


def fits(N: int, D1: int, D2: int, s0: int, sn: int) -> bool:
    """The layout a flat kernel takes: contiguous rows (one leading dimension of stride N, unit column stride)."""
    return sn == 1 and D1 == 1 and D2 == 1 and s0 == N


# Per op: the flat kernel, its pointer arguments (x, the parameters, the output) and the statistics it saves.
_FORMS: dict[str, tuple[Any, tuple[str, ...], tuple[str, ...]]] = {
    "softmax": (softmax_flat_kernel, ("x_ptr", "out_ptr"), ()),
    "rmsnorm": (rmsnorm_flat_kernel, ("x_ptr", "w_ptr", "out_ptr"), ("rstd_ptr",)),
    "layernorm": (layernorm_flat_kernel, ("x_ptr", "w_ptr", "b_ptr", "out_ptr"), ("mean_ptr", "rstd_ptr")),
}


def flat_site(name: str, L: Any, params: tuple[Any, ...], stats: bool = False) -> Site:
    """The op's call as a Site over its flat kernel (rows.RowLaunch L with its flat form): launched with the call's
    (x, *params, out, [eps, statistics]) as the plain Site is."""
    fn, _, stat_ptrs = _FORMS[name]
    F = L.flat
    cfg = {"R": F["R"], "W": F["W"], "P": F["P"], "num_warps": F["num_warps"], "num_stages": 1}
    grid = (triton.cdiv(L.M, F["R"]),)
    if not params:  # softmax: no parameters, no eps
        return Site(fn, grid, (DYN, DYN, L.M, L.N), cfg)
    args = (DYN,) * (2 + len(params)) + (L.M, L.N, *(p.stride(0) for p in params), DYN)
    return Site(fn, grid, args, {**cfg, **dict.fromkeys(stat_ptrs, DYN), "STATS": stats})


def flat_aot(name: str, target: Any) -> list[Any]:
    """The op's flat kernel's compile-only configs: bf16 rows of 13 and fp32 rows of 215, at the H200 policy's
    tiles and warps (the policy takes the flat forms on NVIDIA only; AMD targets compile the same configs, so the audit
    shows what they would cost there), saving the statistics."""
    from rocm_triton_doctor.kernels import policy
    from rocm_triton_doctor.kernels.base import AotSpec

    fn, pointers, stat_ptrs = _FORMS[name]
    specs = []
    for dt, n, elem in (("bf16", 13, 2), ("fp32", 215, 4)):
        cfg = policy.flat_config(policy.target_from_name("sm_90"), n, elem, 1 << 24)
        assert cfg is not None
        sig = {**{p: f"*{dt}" for p in pointers}, "M": "i32", "N": "i32"}
        consts: dict[str, Any] = {"R": cfg["R"], "W": cfg["W"], "P": cfg["P"]}
        if stat_ptrs:
            sig.update({"eps": "fp32", **dict.fromkeys(stat_ptrs, "*fp32")})
            consts.update({**dict.fromkeys(("sw", "sb")[:len(pointers) - 2], 1), "STATS": True})
        specs.append(AotSpec(f"{name} {dt} N={n} (flat rows, {cfg['R']} a program)", fn, sig, consts,
                             {"num_warps": cfg["num_warps"], "num_stages": 1}))
    return specs
