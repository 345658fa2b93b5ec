"""Shared plumbing for the row kernels' backward passes (RMSNorm, LayerNorm, softmax).

The backward of a row kernel writes ∂x row by row (like the forward) and, for per-column parameters (weight, bias),
sums dy-products over all M rows. That sum is done without atomics: each of G programs owns a contiguous range of
rows and keeps its own fp32 partial sum of the parameter gradient, written to row `pid` of a (G, N) buffer; the
buffer is then summed over G in fp32 and cast in one launch (param_sums). Deterministic run to run (no atomic
ordering), the layout Liger-Kernel's rms_norm backward uses (linkedin/Liger-Kernel src/liger_kernel/ops/rms_norm.py:
`_dW` of (sm_count, n_cols)). G is a couple of programs per compute unit (the reduction then reads G·N fp32, small
next to the M·N rows); narrow rows go ROWS at a time (the forward's packing) over up to 32 warps an SM
(gpu_programs). Rows wider than one block: a few of them split over several programs each (row_grads_split.py,
split_parts says when); many of them, for the norms, as row sums then column tiles (row_grads_cols.py); softmax's
loop over chunks. A call signature seen before launches from its plan (GradPlan: rows in one block).

The backward kernels read contiguous rows: the launcher makes x and dy contiguous (a copy for strided inputs; the
gradient torch hands in is usually contiguous already) — strided inputs are handled, at the cost of that copy.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import argcheck, call_plans, policy, rows
from rocm_triton_doctor.kernels.base import AotSpec, cdiv, target_of
from rocm_triton_doctor.kernels.launch_site import DYN, Site


# Narrow rows (ROWS > 1): programs enough for NARROW_WARPS_PER_UNIT warps an SM/CU, where one partial row per
# program (G·N fp32) stays under 1/NARROW_PARTIAL_SHARE of the input. A backward program had walked its rows one at a
# time over 2·SMs programs: RMSNorm fp32 842345x5 forward + backward 0.25x eager, bf16 992949x39 0.37x (H200, session
# 30's backward hunt, docs/measurements/2026-11-29-h200-s30-bwd-hunt1.json); ROWS at a time over these programs 4.33x
# and 3.56x, softmax fp32 47020472x2 0.03x -> 1.91x (benchmarks/backward_probe.py --set rows, …-s30-probe-rows.json).
NARROW_WARPS_PER_UNIT = 32
NARROW_PARTIAL_SHARE = 8


def programs(x: torch.Tensor, M: int, cfg: dict[str, Any]) -> int:
    """G, the number of programs (each with its own partial-sum row), for x's (M, N) rows under cfg."""
    if x.device.type != "cuda":
        return max(1, min(M, 4))  # the interpreter: few programs, each a loop over rows
    return gpu_programs(M, cfg, x.element_size(), units_of(x), per_unit(cfg, target_of(x).backend))


PROGRAMS_PER_UNIT = 2  # programs (partial-sum rows) a unit for rows wider than the narrow ones
# One-block rows of WIDE_ONE_BLOCK lanes or more (N 4097-16384) take WIDE_ONE_BLOCK_PROGRAMS a unit on NVIDIA: half
# the partial rows, twice the rows a program. H200, RMSNorm backward alone x eager's, 2 -> 1 a unit at the policy's
# warps (benchmarks/backward_probe.py --set norm-ppu, docs/measurements/2026-11-29-h200-s32-probe-norm-ppu.json):
# fp16 3067x13823 5.46 -> 5.88 (Liger 7.17), bf16 4096x16384 13.65 -> 14.80 (12.68), 2048x12288 10.19 -> 12.00
# (11.12), fp16 8192x10240 11.30 -> 11.89 (12.94), bf16 2048x8192 10.57 -> 12.02 (11.53), 4096x5120 9.36 -> 10.22
# (9.92), fp32 2048x8192 7.27 -> 7.88 (7.64); LayerNorm bf16 4096x5120 1.16 -> 1.37 (1.32). 4 a unit lost on every
# row (0.32-0.92x of 2). Narrower one-block rows were not timed: they keep 2.
WIDE_ONE_BLOCK = 8192
WIDE_ONE_BLOCK_PROGRAMS = 1


def per_unit(cfg: dict[str, Any], backend: str) -> int:
    """Programs a unit for rows under cfg (narrow rows: gpu_programs may take more)."""
    if backend == "cuda" and not cfg["LOOPED"] and cfg.get("ROWS", 1) == 1 and cfg["BLOCK"] >= WIDE_ONE_BLOCK:
        return WIDE_ONE_BLOCK_PROGRAMS
    return PROGRAMS_PER_UNIT


def gpu_programs(M: int, cfg: dict[str, Any], elem_size: int, units: int, per_unit: int = PROGRAMS_PER_UNIT) -> int:
    """G on a GPU of `units` SMs/CUs: per_unit a unit, or for narrow rows (ROWS > 1) up to NARROW_WARPS_PER_UNIT
    warps a unit while the partial rows stay under 1/NARROW_PARTIAL_SHARE of x; never more than the row tiles."""
    rows = cfg.get("ROWS", 1)
    g = per_unit * units
    if rows > 1:
        g = max(g, min(NARROW_WARPS_PER_UNIT * units // cfg["num_warps"], M * elem_size // (4 * NARROW_PARTIAL_SHARE)))
    return max(1, min(-(-M // rows), g))


def units_of(x: torch.Tensor) -> int:
    """SMs/CUs of x's GPU; 1 for the interpreter (its plans then take few programs)."""
    if not x.is_cuda:
        return 1
    return _units(x.device.index if x.device.index is not None else torch.cuda.current_device())


@functools.lru_cache(maxsize=64)
def _units(index: int) -> int:
    """Compute units of GPU `index` (get_device_properties costs a few us a call: kept per device)."""
    return int(torch.cuda.get_device_properties(index).multi_processor_count)


def config(x: torch.Tensor, N: int, override: dict[str, Any] | None, M: int) -> dict[str, Any]:
    """BLOCK (one row in one block when it fits, else chunks: LOOPED), ROWS (narrow rows a program takes at a time,
    as the forward packs them) and the compiler options, from the forward's policy (policy.row_config) for M rows.
    An override names no ROWS (argcheck): its programs take one row at a time."""
    if not override:
        return _config(target_of(x), N, x.element_size(), policy.row_class(N, M))
    cfg = argcheck.check_row_config("row backward", override, rows=False)
    cfg["LOOPED"] = cfg["BLOCK"] < N
    cfg["ROWS"] = 1
    return cfg


# A backward row in one block keeps the parameter sums (and the weight) for every lane in fp32 registers: past this
# many lanes (16-bit rows of 16385-32768) they spill, and the row loops over policy.ROW_CHUNK-lane chunks at 16 warps
# instead, as wider rows do (NVIDIA). H200, backward alone, x eager autograd's backward, one block -> chunks
# (benchmarks/backward_probe.py --set norm-wide, docs/measurements/2026-11-29-h200-s30-probe-norm-wide.json):
# LayerNorm bf16 3596x29822 0.14 -> 0.52, fp16 2000x20000 0.12 -> 0.55, bf16 300x30000 0.32 -> 1.00, RMSNorm bf16
# 3596x29822 0.84 -> 4.10. At 16384 lanes the block stayed ahead or tied (LayerNorm bf16 4096x16384 1.05 against
# 0.59, fp32 2000x12000 1.02 against 0.93; RMSNorm fp32 2000x12000 6.47 against 5.08) but for one row (LayerNorm bf16
# 1061x12897 0.39 against 0.53-0.58): no rule there yet.
BACKWARD_BLOCK_MAX_LANES = 16384
# A 16384-lane block holding a row of at most 15/16 of it (N 8193-15360) runs the norms' one-block backward kernel at
# 8 warps, not the forward's 16 (kernel_cfg; not softmax's, nor the column tiles' row sums: not timed). H200, backward
# alone x eager's, one program an SM, 16 -> 8 warps (benchmarks/backward_probe.py --set norm-ppu / norm-check, and
# fresh widths: docs/measurements/2026-11-29-h200-s32-probe-w8.json): RMSNorm bf16 2048x9000 4.66 -> 6.14 (Liger
# 5.54), 2048x11000 5.17 -> 6.90 (6.20), fp16 2048x12500 5.40 -> 7.21 (6.44), bf16 2048x15000 5.91 -> 7.93 (7.25),
# fp16 3067x13823 5.88 -> 8.01 (7.17), bf16 2048x12288 12.00 -> 12.53, fp16 8192x10240 11.89 -> 12.52; LayerNorm bf16
# 512x14000 1.15 -> 1.24 (0.97), 1061x12897 0.47 -> 0.82 and 9932x14072 0.28 -> 0.58 (those two take the column
# tiles: 1.28 and 0.70). Fuller rows keep 16: bf16 2048x16000 13.06 against 12.08 at 8, fp16 2048x16384 13.28
# against 11.87, bf16 4096x16384 14.80 against 12.93. Measured through the override path (config=); the policy's
# own path launches the same kernel, configuration and grid. Past 15360 lanes a width that is not a multiple of 16
# takes 8 warps too (session 33, `--set norm-full`, docs/measurements/2026-11-29-h200-s33-probe-norm-full.json:
# RMSNorm bf16 4428x15816 6.48 -> 9.08 (Liger 8.52), bf16 4096x15500 6.07 -> 8.43 (7.91), fp16 3000x15700 6.19 ->
# 8.62 (7.97)); multiples of 16 keep 16 (bf16 2048x15872 12.83 against 11.90 at 8, 8192x16000 13.85 against 13.16).
PARTIAL_BLOCK_MAX_N = 15360


@functools.lru_cache(maxsize=policy.CONFIG_CACHE_SIZE)
def _config(target: policy.Target, N: int, elem_size: int, row_class: int) -> dict[str, Any]:
    """One shared dict per (target, width, element size, row class): launchers splat it and never mutate it."""
    cfg = dict(policy.row_config(target, N, elem_size, row_class))
    if target.backend == "cuda" and cfg["BLOCK"] > BACKWARD_BLOCK_MAX_LANES:
        cfg.update(BLOCK=policy.ROW_CHUNK, num_warps=16)
    cfg["LOOPED"] = cfg["BLOCK"] < N
    cfg["ROWS"] = 1 if cfg["LOOPED"] else cfg.get("ROWS", 1)
    return cfg


def kernel_cfg(cfg: dict[str, Any], N: int, x: torch.Tensor, override: dict[str, Any] | None) -> dict[str, Any]:
    """cfg for the norms' (RMSNorm, LayerNorm) one-program-a-row-range backward kernel: 8 warps for a 16384-lane
    block up to PARTIAL_BLOCK_MAX_N full, or fuller with a width that is not a multiple of 16, on NVIDIA (a new dict;
    cfg is shared); a caller's override as given."""
    if (override is None and not cfg["LOOPED"] and cfg["BLOCK"] == BACKWARD_BLOCK_MAX_LANES
            and (N <= PARTIAL_BLOCK_MAX_N or N % 16) and target_of(x).backend == "cuda"):
        return {**cfg, "num_warps": 8}
    return cfg


def split_parts(x: torch.Tensor, N: int, M: int, cfg: dict[str, Any], up_to: int = policy.ROW_SPLIT_MID_ROWS) -> int:
    """Programs per row for the few-wide-rows backward (row_grads_split.py): the forward's rule (policy.row_split,
    looped rows among at most `up_to`), and in eager mode only rows as wide as the forward splits there (its second
    launch's host time, policy_rows.ROW_SPLIT_EAGER_MIN_COLS); 1: the one-program-a-row kernels."""
    if not cfg["LOOPED"]:  # (looped rows go one at a time: ROWS is 1)
        return 1
    target = target_of(x)
    split = policy.row_split(target, N, x.element_size(), policy.split_class(M), up_to)
    if split > 1 and N < policy.ROW_SPLIT_EAGER_MIN_COLS and not target.interpreter and not rows._capturing(x):
        return 1
    return split


def launch_shape(M: int, G: int, rows: int = 1) -> tuple[tuple[int], int]:
    """(grid, rows per program: a multiple of `rows`, the rows a program takes at a time)."""
    rpp = -(-cdiv(M, G) // rows) * rows if M else 1
    return (cdiv(M, rpp) if M else 0,), rpp


def rows2d(t: torch.Tensor, N: int) -> torch.Tensor:
    """(rows, N), contiguous; rows counted from the leading dims, so a zero-width (…, 0) tensor keeps its rows
    (`reshape(-1, 0)` is ambiguous and raised)."""
    if t.dim() == 2 and t.is_contiguous():  # already (rows, N): no reshape (host time of a planned call)
        return t
    return t.reshape(math.prod(t.shape[:-1]), N).contiguous()


def grad_aot(name: str, fn: Any, pointers: dict[str, str], unit: dict[str, Any], target: policy.Target) -> list[AotSpec]:
    """Compile-only configs of a backward row kernel: a bf16 row of 8192 in one block, an fp32 vocabulary row of
    152064 in chunks and a million bf16 rows of 39 (ROWS at a time) (`pointers` maps pointer names to "x" (the
    activation dtype) or a fixed Triton type)."""
    specs = []
    for dt, n, m, what in (("bf16", 8192, 1 << 30, ""), ("fp32", 152064, 1 << 30, " (looped)"),
                           ("bf16", 39, 1 << 20, " (narrow rows)")):
        cfg = dict(policy.row_config(target, n, 2 if dt == "bf16" else 4, m))
        rows = cfg.pop("ROWS", 1)
        if n > cfg["BLOCK"]:
            rows = 1  # looped rows go one at a time
        sig = {**{p: (f"*{dt}" if t == "x" else t) for p, t in pointers.items()}, "M": "i32", "N": "i32", "RPP": "i32"}
        const = {**unit, "BLOCK": cfg["BLOCK"], "LOOPED": n > cfg["BLOCK"], "ROWS": rows}
        specs.append(AotSpec(f"{name} backward {dt} N={n}{what}", fn, sig, const, cfg))
    return specs


# ---- the parameter gradients: (G, N) fp32 partial rows summed over G and cast, one launch for one or two buffers -----
# torch's `part.sum(0).to(dtype)` is two launches a buffer (a sum, then a cast unless the parameter is fp32): LayerNorm's
# 16-bit backward spent four launches after its kernel, most of the GPU time of a small one.

@triton.jit
def _param_sums_kernel(p0_ptr, p1_ptr, o0_ptr, o1_ptr, G, N, TWO: tl.constexpr, BLOCK_G: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    """o0[c] = Σ_g p0[g, c] (and o1 from p1 when TWO) in fp32, stored in the outputs' dtype; p0 and p1 (G, N)
    contiguous. A program owns BLOCK_N columns and walks all G rows: the sums never cross programs (deterministic)."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cm = cols < N
    g = tl.arange(0, BLOCK_G)
    a0 = tl.zeros([BLOCK_G, BLOCK_N], dtype=tl.float32)
    a1 = tl.zeros([BLOCK_G, BLOCK_N], dtype=tl.float32)
    for g0 in range(0, G, BLOCK_G):
        r = g0 + g
        m = (r < G)[:, None] & cm[None, :]
        offs = r.to(tl.int64)[:, None] * N + cols[None, :]
        a0 += tl.load(p0_ptr + offs, mask=m, other=0.0)
        if TWO:
            a1 += tl.load(p1_ptr + offs, mask=m, other=0.0)
    tl.store(o0_ptr + cols, tl.sum(a0, axis=0).to(o0_ptr.dtype.element_ty), mask=cm)
    if TWO:
        tl.store(o1_ptr + cols, tl.sum(a1, axis=0).to(o1_ptr.dtype.element_ty), mask=cm)


SUM_TILE = 2048  # elements of one buffer a program holds at a time (BLOCK_G x BLOCK_N): 16 fp32 a thread at 4 warps


def sum_config(N: int, G: int, units: int) -> dict[str, Any]:
    """BLOCK_N columns a program: on a GPU of `units` SMs/CUs the power of two in [32, 256] that gives about a program
    a unit (a column block's G rows are one program's serial walk); the interpreter (1 unit): up to 256 columns."""
    want = max(32, min(256, 1 << max(0, (cdiv(N, units) - 1).bit_length())))
    bn = min(want, max(32, 1 << max(0, (N - 1).bit_length())))
    bg = max(1, min(SUM_TILE // bn, 1 << max(0, (G - 1).bit_length())))
    return {"BLOCK_G": bg, "BLOCK_N": bn, "num_warps": 4}


def param_sums(parts: tuple[torch.Tensor, ...], dtypes: tuple[torch.dtype, ...]) -> tuple[torch.Tensor, ...]:
    """Each (G, N) contiguous fp32 partial buffer of `parts` (one or two) summed over its G rows, as a (N,) tensor of
    the matching dtype of `dtypes`: what `p.sum(0).to(dtype)` gives, in one launch."""
    G, N = parts[0].shape
    outs = tuple(torch.empty(N, dtype=d, device=parts[0].device) for d in dtypes)
    if G == 0 or N == 0:
        return tuple(o.zero_() for o in outs)
    sums_site(parts[0], G, N, len(parts)).through_launch((parts[0], parts[-1], outs[0], outs[-1]))
    return outs


def sums_site(like: torch.Tensor, G: int, N: int, n_params: int) -> Site:
    """The launch of _param_sums_kernel over (G, N) partial buffers on like's device; its call passes the two
    partial buffers and the two outputs (the first of each twice for one parameter)."""
    cfg = sum_config(N, G, units_of(like))
    return Site(_param_sums_kernel, (cdiv(N, cfg["BLOCK_N"]),), (DYN,) * 4 + (G, N), {"TWO": n_params == 2, **cfg})


# ---- plans: a backward's second call with the same signature skips the checks and the policy (call_plans.py) -------
# Session 31's host probe (H200, torch 2.11, Triton 3.6; benchmarks/backward_host_probe.py --set host): a training
# step's backward of LayerNorm fp32 8x3466 cost 230 us of host time against eager autograd's 93. Only rows in one
# block are planned: looped rows' plan depends on graph capture (split_parts), and their GPU time dwarfs the host's.

PLANNED = True  # benchmarks/backward_host_probe.py switches it off for its A/B
_PLANS = call_plans.table()


class GradPlan:
    """A row backward's launches: G partial rows a parameter, whether they start zeroed (looped rows add into them),
    the kernel's Site and the parameter sums' Site (None without parameters)."""

    __slots__ = ("G", "looped", "kernel", "sums")

    def __init__(self, G: int, looped: bool, kernel: Site, sums: Site | None) -> None:
        self.G, self.looped, self.kernel, self.sums = G, looped, kernel, sums

    def parts(self, n_params: int, N: int, like: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """n_params (G, N) fp32 partial-row buffers (separate allocations: indexing one buffer twice cost more host
        time than a second allocation)."""
        alloc = torch.zeros if self.looped else torch.empty
        return tuple(alloc((self.G, N), dtype=torch.float32, device=like.device) for _ in range(n_params))


def plan_key(name: str, config: dict[str, Any] | None, *tensors: Any) -> tuple[Any, ...] | None:
    """The plan key of a backward call: its kernel's name (with its options) and the tensors' call_plans.signature;
    None (the checked path, keeping nothing) with a caller's config or tensors call_plans does not plan."""
    if not PLANNED or config is not None:
        return None
    sig = call_plans.signature(*tensors)
    return None if sig is None else (name, *sig)


def planned(key: tuple[Any, ...] | None) -> GradPlan | None:
    return _PLANS.get(key) if key is not None else None


def plan(key: tuple[Any, ...] | None, cfg: dict[str, Any], G: int, kernel: Site, x: torch.Tensor, N: int,
         n_params: int) -> GradPlan:
    """The call's GradPlan (G partial rows a parameter for n_params parameters), kept under `key` when there is one
    and the rows fit one block."""
    p = GradPlan(G, cfg["LOOPED"], kernel, sums_site(x, G, N, n_params) if n_params else None)
    if key is not None and not cfg["LOOPED"]:
        call_plans.keep(_PLANS, key, p)
    return p


def sums_aot(name: str, _target: policy.Target) -> list[AotSpec]:
    """`name`'s compile-only configs of the parameter sums: LayerNorm's two fp32 buffers into bf16 at 32-column blocks
    (N = 8192 on a 304-unit GPU) and RMSNorm's one into fp32 at 256 columns."""
    specs = []
    for two, dt, bn in ((True, "bf16", 32), (False, "fp32", 256)):
        sig = {"p0_ptr": "*fp32", "p1_ptr": "*fp32", "o0_ptr": f"*{dt}", "o1_ptr": f"*{dt}", "G": "i32", "N": "i32"}
        specs.append(AotSpec(f"{name} parameter sums {'two' if two else 'one'} {dt} BLOCK_N={bn}", _param_sums_kernel,
                             sig, {"TWO": two, "BLOCK_G": SUM_TILE // bn, "BLOCK_N": bn}, {"num_warps": 4}))
    return specs
