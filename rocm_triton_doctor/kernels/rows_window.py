"""Rows that start off a 16-byte boundary, read and written in whole 16-byte vectors: the window forms of the
softmax, RMSNorm and LayerNorm forwards (one row a program, in one block or in chunks), the pieces they share, the
parameters' shifted tables, and each op's launch site (window_site), as rows_split.py holds their split forms. Each
window kernel computes what its op's plain kernel does (softmax.py, rmsnorm.py, layernorm.py).

Why. A contiguous row of N elements, N not a multiple of V = 16 / element size (an odd width in 16 bits, N % 4 != 0
in fp32), starts at a different offset within a 16-byte group on each row, so the plain kernels read and write it one
element at a time (ld.global.b16 on sm_90). The hunts' odd-width rows ran at 21-65 % of copy bandwidth, and eager and
Liger-Kernel no faster (H200, session 26, benchmarks/odd_rows_probe.py, docs/measurements/
2026-11-29-h200-s26-odd-rows*.json): LayerNorm fp16 20189x6163 21 % (at 6168: 88 %), RMSNorm fp16 41409x6909 56 %
(at 6912: 99 %), RMSNorm bf16 65536x3001 60 % (at 3008: 100 %).

How. Row r starts s = (r·sx) mod V elements past a boundary. Its window is the row's start rounded down to V
elements, loaded in whole V-element groups: a group is read when it holds any of the row's elements (16 aligned bytes
cannot cross a page, so the elements outside the row are memory that exists; tl.where drops them), so every load's
mask is constant over a group and Triton emits 16-byte loads. The output row (contiguous, so at r·N, with the same
shift when sx ≡ N mod V) is stored the same way for its full groups; the first and last partial groups (at most 2V
elements) are stored element by element from values loaded at the start, so their latency can overlap the body's.
(A second element-wise store over the whole block, masked to the edges, was measured slower: softmax bf16
16384x4097 182 against 117 us with the edges reloaded.) A per-column parameter read at column lane - s would be an
unaligned, uncoalesced gather on every row; WindowSite builds, once a call, V copies of it each shifted by one element
(row s holds param[p - s] at p), which the kernels read in whole vectors at their row's shift.

When (policy_rows.window_config, measured there; rows.prepare decides): odd widths (looped: 16-bit widths of 4k + 2
too) where the plain kernels would run one program a row, unit column stride, one leading dimension whose stride is
≡ N mod V (fits), on NVIDIA; per call, x and the output on 16-byte boundaries (WindowSite: the windows' groups are
only whole aligned groups then), else the plain kernel.
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.base import cdiv
from rocm_triton_doctor.kernels.launch_site import DYN, Site
from rocm_triton_doctor.kernels.rows_split import LOG2E, _ln_shift


@triton.jit
def window(x_ptr, row, sx, N, BLOCK: tl.constexpr, V: tl.constexpr):
    """Row `row` of x (row stride sx) as a window: (base, obase, s, idx, inrow, raw, pe, em, xe) — window_edges'
    values, then window_chunk's for the first BLOCK lanes."""
    base, obase, s, pe, em, xe = window_edges(x_ptr, row, sx, N, V)
    idx, inrow, raw = window_chunk(x_ptr, base, s, N, 0, BLOCK, V, "")
    return base, obase, s, idx, inrow, raw, pe, em, xe


@triton.jit
def window_edges(x_ptr, row, sx, N, V: tl.constexpr):
    """(base, obase, s, pe, em, xe): x's window start and the output's (rows of N), both multiples of V, the row's
    shift s, the 2V edge positions pe (the first group's lanes when s > 0, then the last partial group's), which of
    them are in the row, and x there (loaded first, so their latency overlaps the body's)."""
    o = row.to(tl.int64) * sx
    s = (o % V).to(tl.int32)
    base = tl.multiple_of(o - s, V)
    obase = tl.multiple_of(row.to(tl.int64) * N - s, V)
    h = tl.arange(0, 2 * V)
    pe = tl.where(h < V, h, (s + N) // V * V + h - V)
    em = (pe >= s) & (pe < s + N) & (h >= V - V * tl.minimum(s, 1))  # the first group's lanes only when s > 0
    xe = tl.load(x_ptr + base + pe, mask=em, other=0.0)
    return base, obase, s, pe, em, xe


@triton.jit
def window_chunk(x_ptr, base, s, N, c0, BLOCK: tl.constexpr, V: tl.constexpr, EVICT: tl.constexpr):
    """The window's lanes c0 .. c0 + BLOCK (c0 a multiple of BLOCK): idx, which hold the row (column idx - s), and
    the values as loaded — whole V-element groups wherever a group holds any of the row's elements (0 in groups past
    it; what the groups hold outside the row is for the caller to drop). EVICT: the loads' eviction policy (rows.py:
    wide rows and L2)."""
    idx = c0 + tl.arange(0, BLOCK)
    raw = tl.load(x_ptr + base + idx, mask=idx // V < (s + N + V - 1) // V, other=0.0, eviction_policy=EVICT)
    return idx, (idx >= s) & (idx < s + N), raw


@triton.jit
def window_param(p_ptr, sp, s, lanes, N, LD, V: tl.constexpr, TABLE: tl.constexpr, GROUPS: tl.constexpr = True):
    """A per-column parameter at window lanes `lanes` (column lane - s), fp32, 0 outside the row: from row s of its
    table (TABLE: rows of LD, a multiple of V; with GROUPS, whole V-element groups, so whole vectors), else from the
    parameter itself (stride sp) one element at a time. GROUPS=False for the edge lanes (a handful, any order)."""
    j = lanes - s
    if TABLE:
        t = p_ptr + tl.multiple_of(s * LD, V)
        if GROUPS:
            p = tl.load(t + lanes, mask=lanes // V < (s + N + V - 1) // V, other=0.0)
        else:
            p = tl.load(t + lanes, mask=(j >= 0) & (j < N), other=0.0)
    else:
        p = tl.load(p_ptr + j.to(tl.int64) * sp, mask=(j >= 0) & (j < N), other=0.0)
    return p.to(tl.float32)


@triton.jit
def window_store(out_ptr, obase, s, idx, y, pe, em, ye, N, V: tl.constexpr):
    """y into the output row's full groups in whole vectors, ye (the values at the edge positions) element by
    element: each of the row's elements is stored once, nothing outside it."""
    window_store_full(out_ptr, obase, s, idx, y, N, V)
    tl.store(out_ptr + obase + pe, ye.to(out_ptr.dtype.element_ty), mask=em)


@triton.jit
def window_store_full(out_ptr, obase, s, idx, y, N, V: tl.constexpr):
    """y at the lanes idx that fall in the output row's full groups, in whole vectors (a looped row's chunk; its
    edges are stored once, apart)."""
    g = idx // V
    full = (g >= (s + V - 1) // V) & (g < (s + N) // V)
    tl.store(out_ptr + obase + idx, y.to(out_ptr.dtype.element_ty), mask=full)


# ---- the window forms of the row kernels (their plain forms, and the math they follow, in softmax.py, rmsnorm.py
# and layernorm.py) ----------------------------------------------------------------------------------------------

@triton.jit
def softmax_window_kernel(x_ptr, out_ptr, N, sx, BLOCK: tl.constexpr, V: tl.constexpr, LOOPED: tl.constexpr = False):
    # One row a program, read and written in 16-byte windows (rows_window.py); LOOPED: in BLOCK-lane chunks, two
    # passes as softmax_kernel's (online max and sum, then the chunks in reverse).
    if LOOPED:
        base, obase, s, pe, em, xe = window_edges(x_ptr, tl.program_id(0), sx, N, V)
        mx = tl.full((), float("-inf"), tl.float32)
        sm = tl.zeros((), tl.float32)
        for c0 in range(0, s + N, BLOCK):
            idx, inrow, raw = window_chunk(x_ptr, base, s, N, c0, BLOCK, V, "evict_last")
            x = tl.where(inrow, raw.to(tl.float32), -float("inf"))
            new = tl.maximum(mx, tl.max(x, axis=0))
            shift = tl.where(new == -float("inf"), 0.0, new)
            sm = sm * tl.exp2((mx - shift) * LOG2E) + tl.sum(tl.exp2((x - shift) * LOG2E), axis=0)
            mx = new
        mx = tl.where(mx == -float("inf"), 0.0, mx)
        inv = 1.0 / sm
        chunks = tl.cdiv(s + N, BLOCK)
        for back in range(0, chunks):
            idx, inrow, raw = window_chunk(x_ptr, base, s, N, (chunks - 1 - back) * BLOCK, BLOCK, V, "evict_first")
            window_store_full(out_ptr, obase, s, idx, tl.exp2((raw.to(tl.float32) - mx) * LOG2E) * inv, N, V)
        tl.store(out_ptr + obase + pe, (tl.exp2((xe.to(tl.float32) - mx) * LOG2E) * inv).to(out_ptr.dtype.element_ty),
                 mask=em)
    else:
        base, obase, s, idx, inrow, raw, pe, em, xe = window(x_ptr, tl.program_id(0), sx, N, BLOCK, V)
        x = tl.where(inrow, raw.to(tl.float32), -float("inf"))
        mx = tl.max(x, axis=0)
        e = tl.exp2((x - mx) * LOG2E)
        inv = 1.0 / tl.sum(e, axis=0)
        window_store(out_ptr, obase, s, idx, e * inv, pe, em, tl.exp2((xe.to(tl.float32) - mx) * LOG2E) * inv, N, V)


@triton.jit
def rmsnorm_window_kernel(x_ptr, w_ptr, out_ptr, N, sx, sw, LD, eps, BLOCK: tl.constexpr, V: tl.constexpr,
                          TABLE: tl.constexpr, LOOPED: tl.constexpr = False, rstd_ptr=None, STATS: tl.constexpr = False):
    # One row a program, read and written in 16-byte windows (rows_window.py); the weight from its shifted table
    # (TABLE: rows of LD) or at column lane - s (stride sw). LOOPED: BLOCK-lane chunks, two passes as rmsnorm_kernel's.
    row = tl.program_id(0)
    if LOOPED:
        base, obase, s, pe, em, xe = window_edges(x_ptr, row, sx, N, V)
        we = window_param(w_ptr, sw, s, pe, N, LD, V, TABLE, False)  # the edges' weight, loaded with x's
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for c0 in range(0, s + N, BLOCK):
            idx, inrow, raw = window_chunk(x_ptr, base, s, N, c0, BLOCK, V, "evict_last")
            x = tl.where(inrow, raw.to(tl.float32), 0.0)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        chunks = tl.cdiv(s + N, BLOCK)
        for back in range(0, chunks):
            idx, inrow, raw = window_chunk(x_ptr, base, s, N, (chunks - 1 - back) * BLOCK, BLOCK, V, "evict_first")
            w = window_param(w_ptr, sw, s, idx, N, LD, V, TABLE)
            window_store_full(out_ptr, obase, s, idx, raw.to(tl.float32) * rstd * w, N, V)
        tl.store(out_ptr + obase + pe, (xe.to(tl.float32) * rstd * we).to(out_ptr.dtype.element_ty), mask=em)
    else:
        base, obase, s, idx, inrow, raw, pe, em, xe = window(x_ptr, row, sx, N, BLOCK, V)
        x = tl.where(inrow, raw.to(tl.float32), 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        w = window_param(w_ptr, sw, s, idx, N, LD, V, TABLE)
        we = window_param(w_ptr, sw, s, pe, N, LD, V, TABLE, False)
        window_store(out_ptr, obase, s, idx, x * rstd * w, pe, em, xe.to(tl.float32) * rstd * we, N, V)
    if STATS:
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def layernorm_window_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, sx, sw, sb, LD, eps, BLOCK: tl.constexpr,
                            V: tl.constexpr, TABLE: tl.constexpr, LOOPED: tl.constexpr = False, mean_ptr=None,
                            rstd_ptr=None, STATS: tl.constexpr = False):
    # One row a program, read and written in 16-byte windows (rows_window.py); weight and bias from their shifted
    # tables (TABLE: rows of LD) or at column lane - s. The statistics as layernorm_kernel's: of x minus the row's
    # first element, two-pass in one block, or LOOPED: BLOCK-lane chunks merged (Chan et al.), then the chunks in
    # reverse.
    row = tl.program_id(0)
    base, obase, s, pe, em, xe = window_edges(x_ptr, row, sx, N, V)
    shift = _ln_shift(x_ptr, base + s)
    we = window_param(w_ptr, sw, s, pe, N, LD, V, TABLE, False)  # the edges' parameters, loaded with x's
    be = window_param(b_ptr, sb, s, pe, N, LD, V, TABLE, False)
    if LOOPED:
        mean = tl.zeros((), dtype=tl.float32)
        m2 = tl.zeros((), dtype=tl.float32)
        for c0 in range(0, s + N, BLOCK):
            idx, inrow, raw = window_chunk(x_ptr, base, s, N, c0, BLOCK, V, "evict_last")
            x = tl.where(inrow, raw.to(tl.float32), shift) - shift
            first = tl.maximum(c0, s)
            nb = (tl.minimum(c0 + BLOCK, s + N) - first).to(tl.float32)  # the row's elements in this chunk
            bmean = tl.sum(x, axis=0) / nb
            d = tl.where(inrow, x - bmean, 0.0)
            seen = (first - s).to(tl.float32)
            total = seen + nb
            delta = bmean - mean
            mean = mean + delta * (nb / total)
            m2 = m2 + tl.sum(d * d, axis=0) + (delta * (seen * nb / total)) * delta
        rstd = 1.0 / tl.sqrt(m2 / N + eps)
        chunks = tl.cdiv(s + N, BLOCK)
        for back in range(0, chunks):
            idx, inrow, raw = window_chunk(x_ptr, base, s, N, (chunks - 1 - back) * BLOCK, BLOCK, V, "evict_first")
            w = window_param(w_ptr, sw, s, idx, N, LD, V, TABLE)
            b = window_param(b_ptr, sb, s, idx, N, LD, V, TABLE)
            window_store_full(out_ptr, obase, s, idx, ((raw.to(tl.float32) - shift) - mean) * rstd * w + b, N, V)
    else:
        idx, inrow, raw = window_chunk(x_ptr, base, s, N, 0, BLOCK, V, "")
        x = tl.where(inrow, raw.to(tl.float32), shift) - shift  # 0 outside the row (NaN there never met a subtraction)
        mean = tl.sum(x, axis=0) / N
        d = tl.where(inrow, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
        w = window_param(w_ptr, sw, s, idx, N, LD, V, TABLE)
        b = window_param(b_ptr, sb, s, idx, N, LD, V, TABLE)
        window_store_full(out_ptr, obase, s, idx, d * rstd * w + b, N, V)
    if STATS:
        tl.store(mean_ptr + row, mean + shift)
        tl.store(rstd_ptr + row, rstd)
    tl.store(out_ptr + obase + pe, (((xe.to(tl.float32) - shift) - mean) * rstd * we + be).to(out_ptr.dtype.element_ty),
             mask=em)


@triton.jit
def _table_kernel(a_ptr, b_ptr, t_ptr, N, sa, sb, LD, V: tl.constexpr, BLOCK: tl.constexpr):
    """Row (which·V + s) of the table: parameter `which` (a, then b) shifted right by s, 0 outside it."""
    s = tl.program_id(0)
    which = tl.program_id(1)
    p = tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
    j = (p - s).to(tl.int64)
    m = (j >= 0) & (j < N)
    if which == 0:
        v = tl.load(a_ptr + j * sa, mask=m, other=0.0)
    else:
        v = tl.load(b_ptr + j * sb, mask=m, other=0.0)
    tl.store(t_ptr + (which * V + s).to(tl.int64) * LD + p, v.to(t_ptr.dtype.element_ty), mask=p < LD)


TABLE_BLOCK = 1024


def table_width(N: int, V: int) -> int:
    """A table row's length: every lane a window of a row of N at any shift reads, a multiple of V."""
    return cdiv(N + V - 1, V) * V


def vector_elems(elem_size: int) -> int:
    """V: elements in 16 bytes."""
    return 16 // elem_size


def fits(N: int, D1: int, D2: int, s0: int, sn: int, V: int) -> bool:
    """The layout a window kernel takes: contiguous columns and one leading dimension whose stride keeps each row's
    shift equal to the output's (rows of N)."""
    return sn == 1 and D1 == 1 and D2 == 1 and (s0 - N) % V == 0


class WindowSite:
    """A row kernel's window call as one launch site (launch_site.Site's interface, so call_plans can keep it as a
    plan): per call, the window kernel where x and the output sit on 16-byte boundaries (the windows' groups are then
    whole aligned groups, which cannot cross a page), else the plain kernel; with `params` per-column parameters
    (after x in the call's arguments) first copied into their shifted tables (a third Site, one launch for all).
    window_site builds one."""

    __slots__ = ("plain", "win", "table", "out_at", "params", "shape", "dtype")

    def __init__(self, plain: Site, win: Site, params: tuple[torch.Tensor, ...], N: int, window: dict[str, Any]) -> None:
        # the call's arguments: x, the parameters, then the output (then the op's scalars and statistics)
        self.plain, self.win, self.out_at = plain, win, 1 + len(params)
        V, table = window["V"], window["TABLE"]
        self.params = len(params) if table else 0
        self.table = self.shape = self.dtype = None
        if table and params:
            LD = table_width(N, V)
            self.shape = (len(params), V, LD)
            self.dtype = params[0].dtype if all(p.dtype == params[0].dtype for p in params) else torch.float32
            a, b = params[0], params[-1]
            self.table = Site(_table_kernel, (V, len(params), cdiv(LD, TABLE_BLOCK)),
                              (DYN, DYN, DYN, N, a.stride(0), b.stride(0), LD),
                              {"V": V, "BLOCK": TABLE_BLOCK, "num_warps": 4})

    def _args(self, dyn: tuple[Any, ...], planned: bool) -> tuple[Any, ...] | None:
        """The window kernel's arguments, its tables built; None where x or the output is off a 16-byte boundary."""
        x = dyn[0]
        if (x.data_ptr() | dyn[self.out_at].data_ptr()) % 16:
            return None
        if self.table is None:
            return dyn
        n = self.params
        assert self.shape is not None and self.dtype is not None
        t = torch.empty(self.shape, dtype=self.dtype, device=x.device)
        a, b = dyn[1], dyn[n]
        if planned:
            self.table(a, b, t)
        else:
            self.table.through_launch((a, b, t))
        return (x, *t.unbind(0), *dyn[1 + n:])

    def __call__(self, *dyn: Any) -> None:
        args = self._args(dyn, True)
        if args is None:
            self.plain(*dyn)
        else:
            self.win(*args)

    def through_launch(self, dyn: tuple[Any, ...]) -> None:
        args = self._args(dyn, False)
        if args is None:
            self.plain.through_launch(dyn)
        else:
            self.win.through_launch(args)


# Per op: the window kernel, its pointer arguments (x, the parameters, the output), the pointers of the statistics it
# saves for the backward, and the parameters' stride arguments.
_FORMS: dict[str, tuple[Any, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "softmax": (softmax_window_kernel, ("x_ptr", "out_ptr"), (), ()),
    "rmsnorm": (rmsnorm_window_kernel, ("x_ptr", "w_ptr", "out_ptr"), ("rstd_ptr",), ("sw",)),
    "layernorm": (layernorm_window_kernel, ("x_ptr", "w_ptr", "b_ptr", "out_ptr"), ("mean_ptr", "rstd_ptr"),
                  ("sw", "sb")),
}


def window_site(name: str, plain: Site, L: Any, params: tuple[torch.Tensor, ...] = (),
                stats: bool = False) -> Site | WindowSite:
    """The op's call site: `plain` (its plain kernel's Site) where rows.RowLaunch L has no window form, else a
    WindowSite: the window kernel launched with the call's (x, *params, out, [eps, statistics]) as the plain Site is,
    the parameters read from their tables (stride 1) or as they are."""
    if not L.window:
        return plain
    fn, _, stat_ptrs, _ = _FORMS[name]
    W = dict(L.window)
    if params:
        strides = tuple(1 if W["TABLE"] else p.stride(0) for p in params)
        args = (DYN,) * (2 + len(params)) + (L.N, L.s0, *strides, table_width(L.N, W["V"]), DYN)
        kwargs = {**dict.fromkeys(stat_ptrs, DYN), "STATS": stats, **W}
    else:  # softmax: no parameters, no tables, no eps
        W.pop("TABLE")
        args, kwargs = (DYN, DYN, L.N, L.s0), W
    return WindowSite(plain, Site(fn, (L.M,), args, kwargs), params, L.N, L.window)


def window_aot(name: str, target: Any) -> list[Any]:
    """The op's window kernel's compile-only configs on NVIDIA targets, where the policy takes the windows: bf16 rows
    of 6163 in one block and of 9835 (a norm's in 4096-lane chunks, softmax's in one block), an fp32 row of 152063 in
    chunks (all odd), at the H200 policy's blocks and warps, saving the statistics. AMD targets compiled the same
    configs until session 28, whose LayerNorm window at 4 warps spilled on gfx1100 (64 lanes a thread): configs timed
    and tuned on an H200 say nothing of what AMD would run, so the audit no longer lists them there."""
    from rocm_triton_doctor.kernels import policy
    from rocm_triton_doctor.kernels.base import AotSpec

    if target.backend != "cuda":
        return []
    fn, pointers, stat_ptrs, strides = _FORMS[name]
    specs = []
    for dt, n, elem in (("bf16", 6163, 2), ("bf16", 9835, 2), ("fp32", 152063, 4)):
        cfg = policy.window_config(policy.target_from_name("sm_90"), n, elem, 1 << 20, len(strides))
        assert cfg is not None
        sig = {**{p: f"*{dt}" for p in pointers}, "N": "i32", "sx": "i32"}
        consts = {"BLOCK": cfg["BLOCK"], "V": cfg["V"], "LOOPED": cfg["LOOPED"]}
        if strides:
            sig.update({"LD": "i32", "eps": "fp32", **dict.fromkeys(stat_ptrs, "*fp32")})
            consts.update({**dict.fromkeys(strides, 1), "TABLE": cfg["TABLE"], "STATS": True})
        what = "chunks" if cfg["LOOPED"] else "one block"
        specs.append(AotSpec(f"{name} {dt} N={n} (16-byte windows, {what})", fn, sig, consts,
                             {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}))
    return specs
