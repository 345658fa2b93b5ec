"""Shared plumbing for the row kernels (RMSNorm, LayerNorm, softmax): validation, the row layout, and the launch.

A row kernel reduces over the last dimension N of x and writes a contiguous output of x's shape. Every program owns
ROWS rows (several for narrow rows, policy.row_config) and walks each row in BLOCK-wide chunks: one chunk held in
registers when the row fits (single pass), otherwise a loop (LOOPED), so rows of any width run, vocabulary rows of
128k-262k in fp32 included. x is read through its strides (rows sliced out of a bigger tensor, transposed or
permuted views, stride-0 rows), so no hidden .contiguous() copy; per-column parameters (weight, bias) too — a
non-contiguous or expanded weight was read as if contiguous before (kernel-edge-cases.md #1, #2) — and may be fp32
under 16-bit activations (mixed precision as models keep norm weights); statistics are fp32.

Looped rows read x twice (statistics, then normalise). Pass 1 loads with eviction_policy="evict_last" and pass 2 walks
the chunks in reverse with "evict_first", so pass 2 starts on the chunks most likely still in L2 (policy_rows.py
ROW_SINGLE_BYTES has the measurements).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import argcheck, policy, rows_window
from rocm_triton_doctor.kernels.common import fold_offset
from rocm_triton_doctor.kernels.base import (AotSpec, cdiv, check_alias, check_device, check_dtype, prepare_out, row_layout,
                                             target_of)

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def row_offsets(pid, M, D1, D2, s0, s1, s2, ROWS: tl.constexpr, DIV: tl.constexpr = 1):
    """The program's ROWS row indices, each row's start offset in elements (row r = (i0, i1, i2) over leading
    dimensions of sizes (M / (D1·D2), D1, D2) that do not merge, at i0·s0 + i1·s1 + i2·s2: up to three, folded by
    strides: common.fold_offset), and which rows exist (r < M). int64: offsets past 2^31. The strides arrive divided
    by DIV (see vector_div)."""
    rows = pid.to(tl.int64) * ROWS + tl.arange(0, ROWS)
    return rows, fold_offset(rows, D1, D2, s0 * DIV, s1 * DIV, s2 * DIV), rows < M


@functools.lru_cache(maxsize=4096)
def vector_div(*values: int) -> int:
    """The largest power of two up to 16 dividing every value: the launcher passes width and row strides divided by
    it and the kernel multiplies them back by the constexpr DIV, so Triton knows they are multiples of DIV. Triton
    only specialises an int argument as divisible by 16 or not: a row of 1000 or 3000 elements (2000 / 6000 bytes
    in bf16, 16-byte aligned) otherwise compiled to one 2-byte load per element (ld.global.b16 on sm_90,
    buffer_load_ushort on gfx942; with the hint, ld.global.v4.b32 / buffer_load_dwordx2 — checked with
    --compile-only), and LayerNorm of bf16 65536x3000 ran at 50 % of copy bandwidth on an H100."""
    div = 16
    for v in values:
        while v % div:
            div //= 2
    return div


class RowLaunch:
    """What a row kernel's launcher needs: the output, and the arguments and config of the launch."""

    def __init__(self, out: torch.Tensor, M: int, N: int, D1: int, D2: int, s0: int, s1: int, s2: int, sn: int,
                 cfg: dict[str, Any], split: int = 1, plannable: bool = False,
                 window: dict[str, Any] | None = None):
        self.out, self.M, self.N, self.sn, self.s0, self.cfg = out, M, N, sn, s0, cfg
        # window: the window form's BLOCK, warps, V, TABLE and LOOPED (rows_window.py) where its layout fits; each call then
        # runs it or, where x or the output is off a 16-byte boundary, the plain kernel with cfg (WindowSite).
        self.window = window
        # split > 1: programs per row for the kernels that have a split form (rows_split.py: softmax, RMSNorm);
        # the others ignore it and run one program per row.
        self.split = split
        # plannable: one launch whose every argument but the tensors and eps follows from the call signature
        # (call_plans.py): the policy's config, one program per row, not empty. A split or a caller's config is not.
        self.plannable = plannable and split == 1 and not self.empty
        # The kernel's (M, N, D1, D2, s0, s1, s2, sn) arguments: width and row strides divided by the constexpr DIV,
        # passed as DIV=L.div (vector_div; not in the shared config dict: it depends on the strides).
        self.div = div = vector_div(N, s0, s1 if D1 > 1 else 0, s2 if D2 > 1 else 0)
        self.args = (M, N // div, D1, D2, s0 // div, s1 // div, s2 // div, sn)

    @property
    def grid(self) -> tuple[int]:
        return (cdiv(self.M, self.cfg["ROWS"]),)

    @property
    def empty(self) -> bool:
        return self.M == 0 or self.N == 0


def param_or(x: torch.Tensor, p: torch.Tensor | None, value: float) -> torch.Tensor:
    """A per-column parameter that may be None, as torch's norms allow (nn.LayerNorm(bias=False),
    elementwise_affine=False, F.rms_norm(x, shape, None)): None reads as `value` (1 for a weight, 0 for a bias) in
    every column, one fp32 element at stride 0, which the kernels read as they read any expanded parameter. A refusal
    before (fuzz round 4: "expected torch.Tensor inputs, got NoneType")."""
    if p is not None or not isinstance(x, torch.Tensor):
        return p  # type: ignore[return-value]  # a non-tensor x is refused by prepare with its own message
    n = x.shape[-1] if x.dim() else 1
    return torch.full((1,), value, dtype=torch.float32, device=x.device).expand(n)


def trailing(name: str, x: torch.Tensor, out: torch.Tensor | None, *params: torch.Tensor | None
             ) -> tuple[torch.Tensor, torch.Tensor | None, tuple[torch.Tensor | None, ...], tuple[int, ...] | None]:
    """A norm over several trailing dims (F.layer_norm / F.rms_norm with a normalized_shape S of two or more dims,
    given by a parameter of shape S): x's last len(S) dims as one row, x viewed as (..., prod(S)) (no copy: those dims
    must merge, else a clear refusal), `out` likewise, the parameters flattened (reshape: a small copy where one is not
    contiguous). Returns (x, out, params, x's shape to view the result back to), or everything as given (shape None)
    when no parameter has two or more dims, or shapes that do not pair up (the checks then refuse them)."""
    S = next((tuple(p.shape) for p in params if isinstance(p, torch.Tensor) and p.dim() >= 2), None)
    if S is None or not isinstance(x, torch.Tensor) or x.dim() < len(S) or tuple(x.shape[-len(S):]) != S:
        return x, out, params, None
    n = math.prod(S)
    try:
        x2 = x.view(*x.shape[:-len(S)], n)
    except RuntimeError:
        raise ValueError(f"{name}: the normalised dims {S} of x {tuple(x.shape)} with strides {x.stride()} do not merge "
                         "into one row; call .contiguous() first") from None
    if isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(x.shape) and out.is_contiguous():
        out = out.view(x2.shape)
    flat = tuple(p.reshape(n) if isinstance(p, torch.Tensor) and tuple(p.shape) == S else p for p in params)
    return x2, out, flat, tuple(x.shape)


def prepare(name: str, x: torch.Tensor, params: dict[str, torch.Tensor], out: torch.Tensor | None,
            config: dict[str, Any] | None = None, split_rows: int = policy.ROW_SPLIT_MID_ROWS) -> RowLaunch:
    """Validate a row kernel's input and its per-column parameters (each of shape (N,), any stride and float dtype),
    allocate or check the output, and choose the launch config (`config` overrides the policy's, for tests).
    split_rows: the most rows among which a looped row is split over programs (policy_rows.row_split's up_to).

    Every check is O(1) in the data; the common call (out=None, a contiguous x) skips the alias test (a fresh output
    overlaps nothing) and the stride folding, and shares one cached config dict (issue #16 item 4)."""
    check_device(name, x, *params.values())
    if x.dtype not in DTYPES:
        check_dtype(name, DTYPES, x)
    for p, t in params.items():
        if t.dtype not in DTYPES:
            check_dtype(f"{name} {p}", DTYPES, t)
    shape = x.shape
    if not shape:
        raise ValueError(f"{name}: input must have at least one dimension, got a 0-dim tensor")
    N = shape[-1]
    bad = {p: tuple(t.shape) for p, t in params.items() if tuple(t.shape) != (N,)}
    if bad:
        got = ", ".join(f"{p} {shape}" for p, shape in bad.items())
        raise ValueError(f"{name}: {' and '.join(bad)} must have shape ({N},), got {got}")
    if out is None:
        o = prepare_out(None, shape, x)
    else:
        o = prepare_out(out, tuple(shape), x, name)
        check_alias(name, o, {"x": x, **params}, in_place=("x",))
    if x.is_contiguous():
        M = x.numel() // N if N else math.prod(shape[:-1])
        D1, D2, s0, s1, s2, sn = 1, 1, N, 0, 0, 1
    else:
        M, (D1, D2), [(s0, s1, s2)] = row_layout(name, tuple(shape), x.stride(), lead=3)
        sn = x.stride(-1)
    if config:
        cfg = argcheck.check_row_config(name, config)
        split = cfg.pop("SPLIT", 1)
        want, table = cfg.pop("WINDOW", 0), bool(cfg.pop("TABLE", 1))
        cfg["LOOPED"] = cfg["BLOCK"] < N
        # WINDOW asks for the window form (tests: the interpreter's policy never picks it) where the row and its
        # layout allow it (the plain kernel elsewhere), with the config's BLOCK and warps for both.
        V = rows_window.vector_elems(x.element_size())
        win = None
        if want and split == 1 and rows_window.fits(N, D1, D2, s0, sn, V):
            win = {"BLOCK": cfg["BLOCK"], "num_warps": cfg["num_warps"], "num_stages": cfg.get("num_stages", 1),
                   "V": V, "TABLE": table and bool(params), "LOOPED": cfg["BLOCK"] < N + V - 1}
        return RowLaunch(o, M, N, D1, D2, s0, s1, s2, sn, cfg, split, window=win)
    target, cls = target_of(x), policy.row_class(N, M)
    cfg = _config(target, N, x.element_size(), cls)
    split = policy.row_split(target, N, x.element_size(), policy.split_class(M), split_rows) if cfg["LOOPED"] else 1
    # The policy's one-program rows are a function of the signature; a split turned back to one program depends on
    # whether a graph is being captured, so it is not planned.
    plannable = split == 1 and out is None
    if split > 1 and N < policy.ROW_SPLIT_EAGER_MIN_COLS and not target.interpreter and not _capturing(x):
        split = 1  # the second launch's host time would cost more than the split saves (policy_rows.py)
    win = policy.window_config(target, N, x.element_size(), M, len(params)) if split == 1 else None
    if win is not None and not rows_window.fits(N, D1, D2, s0, sn, win["V"]):
        win = None
    return RowLaunch(o, M, N, D1, D2, s0, s1, s2, sn, cfg, split, plannable, win)


def _capturing(x: torch.Tensor) -> bool:
    """A CUDA graph is being captured on the current stream (torch.compile's cudagraphs, a serving loop's graphs)."""
    return x.is_cuda and torch.cuda.is_current_stream_capturing()


@functools.lru_cache(maxsize=policy.CONFIG_CACHE_SIZE)
def _config(target: policy.Target, N: int, elem_size: int, rows: int) -> dict[str, Any]:
    """The policy's config with LOOPED, one dict per (target, width, element size, policy.row_class) shared by
    every call: launchers splat it and never mutate it."""
    cfg = policy.row_config(target, N, elem_size, rows)
    cfg["LOOPED"] = cfg["BLOCK"] < N
    return cfg


def row_aot(name: str, fn: Any, pointers: tuple[str, ...], scalars: dict[str, str], unit: dict[str, int],
            target: policy.Target) -> list[AotSpec]:
    """A row kernel's compile-only configs: a bf16 row of 8192 in one block (the bench shape), an fp32 vocabulary
    row of 152064 (looped chunks) and bf16 rows of 128 packed several to a program. Contiguous layout as it runs
    most: unit column strides and one leading dimension are the values Triton specialises at launch (== 1)."""
    specs = []
    for dt, n, what in (("bf16", 8192, ""), ("fp32", 152064, " (looped)"), ("bf16", 128, " (rows packed)")):
        cfg = policy.row_config(target, n, 2 if dt == "bf16" else 4)
        sig = {**{p: f"*{dt}" for p in pointers}, "M": "i32", "N": "i32", "s0": "i32", "s1": "i32", "s2": "i32",
               **scalars}
        const = {"D1": 1, "D2": 1, "sn": 1, **unit, "BLOCK": cfg["BLOCK"], "ROWS": cfg["ROWS"], "LOOPED": n > cfg["BLOCK"],
                 "DIV": vector_div(n)}
        specs.append(AotSpec(f"{name} {dt} N={n}{what}", fn, sig, const, cfg))
    return specs
