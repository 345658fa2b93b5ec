"""AdamW as one Triton launch over every parameter tensor (a multi-tensor step), and `AdamW`, a torch.optim
optimizer that runs it.

Why: in a training step the optimizer is pure memory traffic. torch.optim.AdamW's default (foreach) path runs a
dozen multi-tensor kernels per step, each reading and writing whole parameter-sized lists, and allocates a
parameter-sized temporary for sqrt(v); the update needs only one pass: read p, g, m, v and write p, m, v (7·e bytes
an element). The medium model of `smoke --model` (569 M fp32 parameters) spent ~17 ms a step in AdamW on an H100
(docs/model.md, session 5's GPU profile), against ~5.4 ms for that one pass at copy bandwidth.

One launch covers a list of tensors: a table on the device holds each tensor's addresses (int64; the kernel casts
them to pointers), and each program updates one CHUNK-element slice of one tensor (the chunk → tensor map is built
once per list of sizes). The math is torch.optim.AdamW's (decoupled weight decay; torch/optim/adamw.py,
_single_tensor_adamw), in fp32 whatever the parameter dtype, with correctly rounded sqrt and division:

    p ← p·(1 − lr·wd);  m ← m + (1 − β1)(g − m);  v ← β2·v + (1 − β2)·g²
    p ← p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t) + eps)

Not supported (refused with a clear error, use torch.optim.AdamW): amsgrad, maximize, sparse or complex gradients.
Parameters that are not dense and contiguous, or whose gradient has other strides, take torch's single-tensor math
for that tensor (the same update, no kernel).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import KernelSpec, cdiv, check_block, check_device, target_of
from rocm_triton_doctor.kernels.launch import launch

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
# Blocks a program updates. H200, 569 M fp32 parameters, 1024-element blocks: 1 block 98.4 % of copy, 4: 95.7 %,
# 8: 94.5 %, 32: 93.2 % (benchmarks/adamw_probe.py; docs/model.md, session 10).
CHUNK_BLOCKS = 1


@triton.jit
def _adamw_block(p_in, g_in, m_in, v_in, p_out, m_out, v_out, offs, end, decay, beta1, beta2, eps, step_size,
                 bc2_sqrt, MASKED: tl.constexpr):
    mask = offs < end if MASKED else None
    p = tl.load(p_in + offs, mask=mask).to(tl.float32)
    g = tl.load(g_in + offs, mask=mask).to(tl.float32)
    m = tl.load(m_in + offs, mask=mask).to(tl.float32)
    v = tl.load(v_in + offs, mask=mask).to(tl.float32)
    p = p * decay
    # torch: exp_avg.lerp_(grad, 1 - beta1), with lerp's two formulas (ATen's lerp: self + w·(end − self) for w < 0.5,
    # end − (end − self)·(1 − w) otherwise), so an infinite gradient gives torch's NaN or inf, not another one.
    w = 1.0 - beta1
    d = g - m
    m = tl.where(w < 0.5, m + w * d, g - d * (1.0 - w))
    v = v * beta2 + (1.0 - beta2) * (g * g)  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = tl.div_rn(tl.sqrt_rn(v), bc2_sqrt) + eps
    p = p - step_size * tl.div_rn(m, denom)
    tl.store(p_out + offs, p.to(p_out.dtype.element_ty), mask=mask)
    tl.store(m_out + offs, m.to(m_out.dtype.element_ty), mask=mask)
    tl.store(v_out + offs, v.to(v_out.dtype.element_ty), mask=mask)


@triton.jit
def adamw_kernel(table, gtable, chunk_tensor, chunk_start, numel, p_like, s_like, decay, beta1, beta2, eps, step_size,
                 bc2_sqrt, COLS: tl.constexpr, BLOCK: tl.constexpr, CHUNK_BLOCKS: tl.constexpr,
                 ALIGNED: tl.constexpr):
    """Program c updates elements [start, start + CHUNK_BLOCKS·BLOCK) of tensor t = chunk_tensor[c]. Row t of
    `table` (COLS int64 addresses): p, m, v, and with COLS == 6 the outputs p', m', v' (else in place); gtable[t] is
    the gradient's address (a table of its own: gradients move between steps, the rest does not). `p_like` and
    `s_like` are tensors of the parameter's and the state's dtype: their pointer types are the casts' targets.
    ALIGNED: every address is a multiple of 16 bytes (the host checked), so full blocks load 16 bytes at a time."""
    c = tl.program_id(0)
    t = tl.load(chunk_tensor + c).to(tl.int64)
    start = tl.load(chunk_start + c)
    n = tl.load(numel + t)
    row = table + t * COLS
    p_in = tl.load(row).to(p_like.dtype)
    g_in = tl.load(gtable + t).to(p_like.dtype)
    m_in = tl.load(row + 1).to(s_like.dtype)
    v_in = tl.load(row + 2).to(s_like.dtype)
    if COLS == 6:
        p_out = tl.load(row + 3).to(p_like.dtype)
        m_out = tl.load(row + 4).to(s_like.dtype)
        v_out = tl.load(row + 5).to(s_like.dtype)
    else:
        p_out = p_in
        m_out = m_in
        v_out = v_in
    if ALIGNED:
        p_in = tl.multiple_of(p_in, 16)
        g_in = tl.multiple_of(g_in, 16)
        m_in = tl.multiple_of(m_in, 16)
        v_in = tl.multiple_of(v_in, 16)
        p_out = tl.multiple_of(p_out, 16)
        m_out = tl.multiple_of(m_out, 16)
        v_out = tl.multiple_of(v_out, 16)
        start = tl.multiple_of(start, BLOCK)
    for i in range(CHUNK_BLOCKS):
        off = start + i * BLOCK
        offs = off + tl.arange(0, BLOCK)
        # Only the block that crosses the tensor's end is masked: a mask on every block would make every access a
        # scalar one whenever n is not a multiple of 16 (elementwise.full_block).
        if off + BLOCK <= n:
            _adamw_block(p_in, g_in, m_in, v_in, p_out, m_out, v_out, offs, n, decay, beta1, beta2, eps, step_size,
                         bc2_sqrt, False)
        elif off < n:
            _adamw_block(p_in, g_in, m_in, v_in, p_out, m_out, v_out, offs, n, decay, beta1, beta2, eps, step_size,
                         bc2_sqrt, True)


def _finite(v: float) -> bool:
    try:
        return math.isfinite(float(v))
    except OverflowError:  # an int beyond float's range
        return False


def check_hyper(lr: float, betas: Any, eps: float, weight_decay: float) -> tuple[float, float, float, float, float]:
    """torch.optim.AdamW's argument checks (the same ranges), for finite floats: (lr, beta1, beta2, eps,
    weight_decay) as floats (an int too large for fp32 had reached the kernel and failed in Triton's specialisation)."""
    if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 2:
        raise ValueError(f"adamw: betas must be two numbers (beta1, beta2), got {betas!r}")
    out = []
    for name, v in (("lr", lr), ("beta1", betas[0]), ("beta2", betas[1]), ("eps", eps),
                    ("weight_decay", weight_decay)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
            raise ValueError(f"adamw: {name} must be a finite number, got {v!r}")
        out.append(float(v))
    if lr < 0 or eps < 0 or weight_decay < 0:
        raise ValueError(f"adamw: lr, eps and weight_decay must be >= 0, got {lr}, {eps}, {weight_decay}")
    if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
        raise ValueError(f"adamw: betas must lie in [0, 1), got {tuple(betas)}")
    return out[0], out[1], out[2], out[3], out[4]


_CHUNKS: dict[tuple[Any, ...], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}


def _chunks(numels: tuple[int, ...], chunk: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(chunk → tensor index int32, chunk → first element int64, numel per tensor int64) on `device`, cached per list
    of sizes (an optimizer's never changes)."""
    key = (numels, chunk, device)
    got = _CHUNKS.get(key)
    if got is None:
        tix: list[int] = []
        starts: list[int] = []
        for i, n in enumerate(numels):
            k = cdiv(n, chunk)
            tix += [i] * k
            starts += range(0, k * chunk, chunk)
        got = (torch.tensor(tix, dtype=torch.int32, device=device), torch.tensor(starts, dtype=torch.int64, device=device),
               torch.tensor(numels, dtype=torch.int64, device=device))
        if len(_CHUNKS) > 64:  # a long-lived process with many optimizers: keep the newest
            _CHUNKS.clear()
        _CHUNKS[key] = got
    return got


def adamw_(params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor], exp_avgs: Sequence[torch.Tensor],
           exp_avg_sqs: Sequence[torch.Tensor], *, step: int, lr: float, beta1: float = 0.9, beta2: float = 0.999,
           eps: float = 1e-8, weight_decay: float = 1e-2,
           outs: tuple[Sequence[torch.Tensor], Sequence[torch.Tensor], Sequence[torch.Tensor]] | None = None,
           block: int | None = None) -> None:
    """One AdamW step (step number `step` ≥ 1, after its increment) on lists of dense, contiguous tensors of one
    parameter dtype and one state dtype on one device, in one launch. In place, or into `outs` = (params', exp_avgs',
    exp_avg_sqs') when given (each the shape of its input; nothing else is written)."""
    lr, beta1, beta2, eps, weight_decay = check_hyper(lr, (beta1, beta2), eps, weight_decay)
    block = check_block("adamw", block)
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ValueError(f"adamw: step must be an int >= 1 (the step being taken), got {step!r}")
    given = [params, grads, exp_avgs, exp_avg_sqs, *(() if outs is None else _sequence("outs", outs))]
    if outs is not None and len(given) != 7:
        raise ValueError(f"adamw: outs must be three lists (params', exp_avgs', exp_avg_sqs'), got {len(given) - 4}")
    lists = [_sequence(n, x) for n, x in zip(("params", "grads", "exp_avgs", "exp_avg_sqs", "outs", "outs", "outs"),
                                             given)]
    if not lists[0] or any(len(x) != len(lists[0]) for x in lists):
        raise ValueError("adamw: params, grads, exp_avgs and exp_avg_sqs (and outs) must be non-empty lists of one length")
    flat = [t for x in lists for t in x]
    check_device("adamw", *flat)
    pdt, sdt = lists[0][0].dtype, lists[2][0].dtype
    for col, want in zip(lists, (pdt, pdt, sdt, sdt, pdt, sdt, sdt)):
        for t in col:
            if t.dtype != want:
                raise TypeError(f"adamw: mixed dtypes {t.dtype} and {want} (a gradient has its parameter's dtype, "
                                "exp_avg and exp_avg_sq share one)")
    if pdt not in DTYPES or sdt not in DTYPES:
        raise TypeError(f"adamw: dtype {pdt if pdt not in DTYPES else sdt} not supported (float16, bfloat16, float32)")
    for i in range(len(lists[0])):
        shape = lists[0][i].shape
        for col in lists:
            t = col[i]
            if t.shape != shape:
                raise ValueError(f"adamw: tensor {i}: shapes differ: {tuple(t.shape)} and {tuple(shape)}")
            if not t.is_contiguous():
                raise ValueError(f"adamw: tensor {i} is not contiguous (AdamW below takes torch's math for those)")
    if outs is not None:
        ins = {t.data_ptr() for col in lists[:4] for t in col if t.numel()}
        if any(t.data_ptr() in ins for col in lists[4:] for t in col if t.numel()):
            raise ValueError("adamw: an output is one of the inputs; leave outs=None to update in place")
    keep = [i for i, t in enumerate(lists[0]) if t.numel()]
    if not keep:
        return
    lists = [[col[i] for i in keep] for col in lists]
    _refuse_capture()
    tables = _Tables([lists[0], *lists[2:]], block)
    tables.set_grads(lists[1])
    tables.launch(step, lr, beta1, beta2, eps, weight_decay)


def _sequence(name: str, x: Any) -> list[Any]:
    """A list or tuple of tensors as a list (a tensor, a string or None is not one: a TypeError naming adamw)."""
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"adamw: {name} must be a list or tuple of tensors, got {type(x).__name__}")
    return list(x)


def _refuse_capture() -> None:
    """A CUDA graph would freeze the step's bias corrections (kernel arguments) and copy the address table from a
    host buffer that is gone by the replay: every replay after the first would be silently wrong. (is_available
    first: a CPU-only torch has no capture query.)"""
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("AdamW (rocm_triton_doctor) cannot be captured in a CUDA graph: its step count and address "
                           "table live on the host; use torch.optim.AdamW(capturable=True) inside graphs")


def _device_int64(values: list[int], dev: torch.device) -> torch.Tensor:
    """A host list as an int64 tensor on `dev`, copied from pinned memory without waiting: the host does not stall
    until the GPU has finished backward (the caching host allocator keeps the pinned buffer until the copy ran)."""
    t = torch.tensor(values, dtype=torch.int64, pin_memory=dev.type == "cuda")
    return t.to(dev, non_blocking=True)


class _Tables:
    """What one launch needs for a list of tensors: the address table of p, m, v (and the outputs), the chunk map,
    the config, and the gradients' addresses (set_grads: re-copied only when they move)."""

    def __init__(self, cols: list[list[torch.Tensor]], block: int | None = None) -> None:
        p0 = cols[0][0]
        self.dev = p0.device
        cfg = dict(policy.shared(policy.elementwise_config, target_of(p0), 1 << 24))
        if block is not None:
            cfg["BLOCK"] = block
        self.cfg = cfg
        self.cols = len(cols)
        rows = [t.data_ptr() for ts in zip(*cols) for t in ts]
        self.p_addrs = rows[::len(cols)]  # the parameters' addresses: a plan holds while they stay put
        self.table = _device_int64(rows, self.dev)
        self.aligned = all(a % 16 == 0 for a in rows)
        self.p_like, self.s_like = p0, cols[1][0]
        self.chunks = _chunks(tuple(t.numel() for t in cols[0]), cfg["BLOCK"] * CHUNK_BLOCKS, self.dev)
        self.gaddrs: list[int] = []
        self.gtable: torch.Tensor | None = None
        self.g_aligned = False

    def set_grads(self, grads: list[torch.Tensor]) -> None:
        gaddrs = [g.data_ptr() for g in grads]
        if gaddrs != self.gaddrs:  # with the caching allocator, a step's gradients usually reuse the last step's blocks
            self.gtable = _device_int64(gaddrs, self.dev)
            self.gaddrs = gaddrs
            self.g_aligned = all(a % 16 == 0 for a in gaddrs)

    def launch(self, step: int, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float) -> None:
        tix, starts, numels = self.chunks
        if not tix.numel():  # every tensor empty
            return
        launch(adamw_kernel, (tix.numel(),), self.table, self.gtable, tix, starts, numels, self.p_like, self.s_like,
               1.0 - lr * weight_decay, beta1, beta2, eps, lr / (1.0 - beta1 ** step),
               math.sqrt(1.0 - beta2 ** step), COLS=self.cols, CHUNK_BLOCKS=CHUNK_BLOCKS,
               ALIGNED=self.aligned and self.g_aligned, **self.cfg)


def _torch_update(p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor, step: int, lr: float,
                  beta1: float, beta2: float, eps: float, wd: float) -> None:
    """torch.optim.AdamW's single-tensor update (torch/optim/adamw.py), for tensors the kernel does not take."""
    p.mul_(1.0 - lr * wd)
    m.lerp_(g, 1.0 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
    denom = (v.sqrt() / math.sqrt(1.0 - beta2 ** step)).add_(eps)
    p.addcdiv_(m, denom, value=-lr / (1.0 - beta1 ** step))


class AdamW(torch.optim.Optimizer):
    """torch.optim.AdamW(params, lr, betas, eps, weight_decay) with the step in one Triton launch per (parameter
    group, dtype, device, step count) — usually one. Its state per parameter has torch's keys (step, exp_avg,
    exp_avg_sq; step a plain float), so a state_dict moves between the two. amsgrad, maximize, capturable,
    differentiable and foreach/fused are not options here (use torch.optim.AdamW for them).

    Host time matters at small sizes (a 32 M-parameter model's step is host-bound): once a group's every parameter
    has had a gradient in one launch, its address tables are kept (a "plan") and later steps only check that the
    parameters and gradients are where they were (re-copying the gradients' addresses when they moved)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        check_hyper(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay})
        self._plans: dict[int, tuple[tuple[int, ...], _Tables, int]] = {}  # group index -> (param ids, tables, step)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._plans.clear()  # the state's tensors are new ones
        super().load_state_dict(state_dict)

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        _refuse_capture()  # before any step count moves
        for gi, group in enumerate(self.param_groups):
            hyper = (float(group["lr"]), *group["betas"], group["eps"], group["weight_decay"])
            check_hyper(hyper[0], (hyper[1], hyper[2]), hyper[3], hyper[4])  # a scheduler may have changed lr
            plan = self._plans.pop(gi, None)
            if plan is None or not self._step_planned(gi, group["params"], plan, hyper):
                self._step_group(gi, group["params"], hyper)
        return loss

    def _step_planned(self, gi: int, params: list[torch.Tensor], plan: tuple[tuple[int, ...], _Tables, int],
                      hyper: tuple[float, ...]) -> bool:
        ids, tables, t = plan
        if len(params) != len(ids):
            return False
        grads = []
        for p, i in zip(params, ids):
            g = p.grad
            if (id(p) != i or g is None or g.layout is not torch.strided or g.dtype is not p.dtype
                    or not g.is_contiguous()):
                return False
            grads.append(g)
        if [p.data_ptr() for p in params] != tables.p_addrs:
            return False
        t += 1
        for p in params:
            self.state[p]["step"] = float(t)
        tables.set_grads(grads)
        tables.launch(t, *hyper)
        self._plans[gi] = (ids, tables, t)
        return True

    def _step_group(self, gi: int, params: list[torch.Tensor], hyper: tuple[float, ...]) -> None:
        buckets: dict[tuple[Any, ...], list[list[torch.Tensor]]] = {}
        every = True
        for p in params:
            g = p.grad
            if g is None:
                every = False
                continue
            if g.is_sparse or torch.is_complex(p):
                raise RuntimeError("AdamW (rocm_triton_doctor): sparse or complex gradients are not supported; "
                                   "use torch.optim.AdamW")
            st = self.state[p]
            if not st:
                st["step"] = 0.0
                st["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                st["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            t = int(float(st["step"])) + 1  # float(): a state loaded from torch.optim.AdamW holds a tensor
            st["step"] = float(t)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            if (p.dtype in DTYPES and m.dtype in DTYPES and p.is_contiguous() and g.is_contiguous()
                    and m.is_contiguous() and v.is_contiguous() and g.dtype == p.dtype and v.dtype == m.dtype):
                for col, x in zip(buckets.setdefault((p.device, p.dtype, m.dtype, t), [[], [], [], []]), (p, g, m, v)):
                    col.append(x)
            else:
                every = False
                _torch_update(p, g, m, v, t, *hyper)
        for (_, _, _, t), (ps, gs, ms, vs) in buckets.items():
            tables = _Tables([ps, ms, vs])
            tables.set_grads(gs)
            tables.launch(t, *hyper)
            if every and len(buckets) == 1:
                self._plans[gi] = (tuple(id(p) for p in params), tables, t)


# ---- smoke cases -------------------------------------------------------------------------------------------------


# The smoke cases and the compile-only audit's specs live in adamw_cases.py (imported last: they call adamw_()).
from rocm_triton_doctor.kernels.adamw_cases import aot_specs, cases, make_case  # noqa: E402,F401 - the registry's hooks

KERNEL = KernelSpec("adamw", "memory", cases, aot_specs, perf_targets=("mem-copy",))
