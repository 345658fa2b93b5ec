"""What a smoke case is: inputs, the Triton launch, an fp32 reference, the torch eager baseline, and its cost."""

from __future__ import annotations

import contextlib
import functools
import numbers
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple
from collections.abc import Callable, Iterator

import torch

from rocm_triton_doctor.kernels.policy import Target, target_for_device

Inputs = dict[str, Any]


@dataclass(frozen=True)
class DropoutCheck:
    """How to see a case's dropout. `observed(inputs, out)`: the values after dropout (exactly 0 where dropped);
    `undropped(inputs)`: the reference before dropout; `combine(inputs, dropped)`: the full expected output from the
    expected dropped values (identity, or + residual). The mask is read off the output, then everything is checked."""

    p: float
    observed: Callable[[Inputs, torch.Tensor], torch.Tensor]
    undropped: Callable[[Inputs], torch.Tensor]
    combine: Callable[[Inputs, torch.Tensor], torch.Tensor] = lambda inputs, dropped: dropped


@dataclass(frozen=True)
class Case:
    kernel: str
    name: str
    dtype: torch.dtype
    setup: Callable[[torch.device, torch.Generator], Inputs]
    run: Callable[[Inputs, torch.Tensor | None], torch.Tensor]  # (inputs, poisoned out or None) -> out
    reference: Callable[[Inputs], torch.Tensor]  # fp32/fp64 math, same shape as out
    eager: Callable[[Inputs], torch.Tensor] | None  # torch eager in the input dtype (the baseline to beat)
    flops: float
    bytes: float
    out_shape: Callable[[Inputs], tuple[int, ...]]
    tf32: bool = False
    dropout: DropoutCheck | None = None
    seed_shape: bool = False  # one of the published seed shapes
    params: dict[str, Any] = field(default_factory=dict)  # the case's shape/epilogue, for the targets (smoke/targets.py)
    # The check also allows, element by element, the error torch eager makes in the same dtype (smoke/correctness.py):
    # for outputs whose rounding in the input dtype can exceed the tolerance table (linear+CE's ∂W in bf16: sums of
    # thousands of cancelling terms, where eager torch itself was 1.2-2.1x the tolerance off fp64 on an H200).
    eager_slack: bool = False
    # How eager's elementwise error becomes the slack (None: element by element). linear+CE pools it over each row of
    # ∂h and ∂W: a row's elements are sums of the same shape, so their errors are one distribution, and an element
    # where eager happened to land close had held ours to the bare tolerance (seed 25, docs/performance.md).
    slack_pool: Callable[[torch.Tensor], torch.Tensor] | None = None
    # Whether the case may be timed by CUDA-graph replay (smoke/runner.py). adamw's may not: its step refuses capture
    # (kernels/adamw.py: host-side step counts), and torch's AdamW baseline keeps its step counts on the CPU.
    graphable: bool = True

    @property
    def id(self) -> str:
        return f"{self.kernel}[{self.name}]"


class AotSpec(NamedTuple):
    """One ahead-of-time compile of a kernel for the audit (smoke/aot.py): `label` names the row (it starts with the
    kernel's name), `fn` is the @triton.jit function, `signature` maps each runtime argument to a Triton type string,
    `constexprs` the compile-time values, and `options` the launch config the launcher splats into its launch (what is
    not a constexpr in it is a compiler option: num_warps, num_stages, waves_per_eu, ...)."""

    label: str
    fn: Any
    signature: dict[str, str]
    constexprs: dict[str, Any]
    options: dict[str, Any]


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel says about itself (each kernel module ends in `KERNEL = KernelSpec(...)`).

    name: the module's name, the cases' `kernel`, the `smoke --only` name and the AOT labels' prefix — one name.
    bound: what its speed is judged against — "memory" (copy bandwidth, GB/s) or "compute" (the matmul rate).
    cases(preset, target): its smoke cases; aot(target): its compile-only audit configs.
    perf_targets: the ids of issue #5's performance targets (smoke/targets.py TARGETS) its cases may be covered by."""

    name: str
    bound: Literal["memory", "compute"]
    cases: Callable[[str, Target], list[Case]]
    aot: Callable[[Target], list[AotSpec]]
    perf_targets: tuple[str, ...] = ()


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def randn(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, gen: torch.Generator,
          scale: float = 1.0) -> torch.Tensor:
    """Fresh random, never-zero inputs (timing and checking on zeros hides bugs and flatters speed)."""
    x = torch.randn(shape, generator=gen, dtype=torch.float32, device=device) * scale
    x = torch.where(x == 0, torch.full_like(x, 1e-3), x)
    return x.to(dtype=dtype)


def check_device(name: str, *tensors: torch.Tensor) -> torch.device:
    """All inputs are tensors with data, on one device the kernels can run on, and none needs autograd.

    Refused: non-tensors (TypeError), tensors on `meta` (no data: Triton would fail with "0 active drivers"), and,
    while autograd is recording, inputs that require grad — a plain call records no backward (autograd_op does), so
    the output would come back silently detached (kernel-edge-cases.md #9, #18, #20). Under torch.no_grad() or
    inference_mode() a parameter that requires grad is fine: nothing would be recorded anyway."""
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected torch.Tensor inputs, got {type(t).__name__}")
    x = tensors[0]
    dev = x.device
    for t in tensors[1:]:
        if t.device != dev:
            raise ValueError(f"{name}: all tensors must be on one device, got {t.device} and {dev}")
    if x.is_meta:  # (is_meta / is_cpu: flags, cheaper than device.type on the hot path)
        raise ValueError(f"{name}: tensors on the meta device have no data to compute on (use a GPU or CPU tensor)")
    if torch.is_grad_enabled():
        for t in tensors:
            if t.requires_grad:
                raise ValueError(f"{name}: an input requires grad, but this call records no backward (the output "
                                 "would be silently detached): for gradients use the kernel module's autograd_op "
                                 "where it has one (rmsnorm, layernorm, softmax, swiglu, attention, ...), or call it "
                                 "under torch.no_grad() or torch.inference_mode(), or pass .detach()ed tensors")
    if x.is_cpu:
        from rocm_triton_doctor.kernels.policy import interpreter_active

        if not interpreter_active():
            raise ValueError(f"{name}: CPU tensors need TRITON_INTERPRET=1 (use a GPU tensor or the interpreter)")
    return dev


def check_dtype(name: str, allowed: tuple[torch.dtype, ...], *tensors: torch.Tensor) -> torch.dtype:
    dt = tensors[0].dtype
    for t in tensors:
        if t.dtype != dt:
            raise TypeError(f"{name}: mixed dtypes {t.dtype} and {dt}")
    if dt not in allowed:
        raise TypeError(f"{name}: dtype {dt} not supported (use {', '.join(dtype_name(a) for a in allowed)})")
    return dt


def check_p(p: float, name: str = "dropout") -> float:
    if type(p) is float and 0.0 <= p < 1.0:  # the common case, without the numbers.Real ABC check
        return p
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{name}: dropout probability p must be a number, got {type(p).__name__}")
    if not (0.0 <= float(p) < 1.0):
        raise ValueError(f"{name}: dropout probability p must be in [0, 1), got {p}")
    return float(p)


def check_eps(name: str, eps: float) -> float:
    if type(eps) is float and eps > 0:  # the common case, without the numbers.Real ABC check
        return eps
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"{name}: eps must be a number, got {type(eps).__name__}")
    if not eps > 0:
        raise ValueError(f"{name}: eps must be > 0, got {eps}")
    return float(eps)


def resolve_seed(name: str, seed: int | None) -> int:
    """The dropout seed for one call. None draws a fresh one from torch's default CPU generator, so every call gets a
    new mask (as F.dropout does) and torch.manual_seed still makes a run reproducible; a given seed must be an
    integer that fits in 64 bits (kernel-edge-cases.md #10, #19)."""
    if seed is None:
        return int(torch.randint(0, 2**31 - 1, (), dtype=torch.int64).item())
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name}: seed must be an int or None, got {type(seed).__name__}")
    if not -(2**63) <= int(seed) < 2**63:
        raise ValueError(f"{name}: seed must fit in 64 bits, got {seed}")
    return int(seed)


def stream_seed(seed: int, stream: int) -> int:
    """A 63-bit Philox key for (seed, stream): kernels that share common.dropout_tile pass their own stream number, so
    the same seed gives them different masks. splitmix64's finaliser (a bijection of 64-bit words) mixes seed + a
    per-stream odd constant, and the top bit is dropped so the key is a non-negative int64 (Triton's randint takes
    both 32-bit halves of it). A modulus 2^31 - 1 before had mapped seed and seed + k·(2^31 - 1) to one key: seeds 0
    and 2147483647 drew the same mask (fuzz round 4)."""
    z = (seed + (stream + 1) * 0x9E3779B97F4A7C15) & _U64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _U64
    return (z ^ (z >> 31)) & (_U64 >> 1)


_U64 = (1 << 64) - 1


def check_block(name: str, block: int | None) -> int | None:
    """A user-chosen block size: a power of two from 1 to 65536 (a Triton block holds at most 2^20 elements; the
    interpreter's default tops out at 2^16), kernel-edge-cases.md #16."""
    if block is None:
        return None
    if isinstance(block, bool) or not isinstance(block, numbers.Integral):
        raise TypeError(f"{name}: block must be an int, got {type(block).__name__}")
    if block < 1 or block > 65536 or block & (block - 1):
        raise ValueError(f"{name}: block must be a power of two from 1 to 65536, got {block}")
    return int(block)


def dropout_args(p: float) -> tuple[int, float]:
    """(16-bit threshold, scale) for common.dropout_tile: keep when 16 random bits >= round(p·65536); kept values are
    multiplied by 1/(1-p_effective), p_effective = threshold/65536, so the expectation is preserved exactly."""
    t = min(int(round(p * 65536)), 65535)
    return t, 1.0 / (1.0 - t / 65536)


def prepare_out(out: torch.Tensor | None, shape: tuple[int, ...], like: torch.Tensor, name: str = "kernel"
                ) -> torch.Tensor:
    if out is None:
        if like.shape == shape:
            # empty_like costs a third to a half of torch.empty(shape, dtype=, device=) (no device object to parse);
            # the output is contiguous whatever like's layout is
            return torch.empty_like(like) if like.is_contiguous() else torch.empty_like(
                like, memory_format=torch.contiguous_format)
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{name}: out must be a torch.Tensor, got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape) or out.dtype != like.dtype or not out.is_contiguous() or out.device != like.device:
        raise ValueError(f"{name}: out must be a contiguous {like.dtype} tensor of shape {shape} on {like.device}")
    if torch.is_grad_enabled() and out.requires_grad:
        raise ValueError(f"{name}: out requires grad: a plain kernel call records no backward; pass a tensor that does "
                         "not")
    return out


def target_of(t: torch.Tensor) -> Target:
    """policy.target_for_device for t's device, reading the is_cuda flag first (a torch.device object and its .type
    string cost ~1 us a call; ROCm tensors report "cuda" too)."""
    return target_for_device("cuda" if t.is_cuda else t.device.type)


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for launch grids on the host: triton.cdiv is a @triton.jit function, and calling it from Python
    goes through JITFunction.__call__ (~4 us a call against ~0.03 us for this, measured on the CI machine)."""
    return -(-a // b)


def _extent(t: torch.Tensor) -> tuple[int, int] | None:
    """The byte range [lo, hi) a tensor's elements occupy (None when it has none). O(1) for a contiguous tensor
    (is_contiguous() is cached by torch), a loop over the dimensions otherwise."""
    n = t.numel()
    if n == 0:
        return None
    lo = hi = t.data_ptr()
    if t.is_contiguous():
        return lo, lo + n * t.element_size()
    for size, st in zip(t.shape, t.stride()):
        if st > 0:
            hi += (size - 1) * st * t.element_size()
        elif st < 0:
            lo += (size - 1) * st * t.element_size()
    return lo, hi + t.element_size()


def check_alias(name: str, out: torch.Tensor, inputs: dict[str, torch.Tensor], in_place: tuple[str, ...] = ()) -> None:
    """Refuse an output that overlaps an input's memory (programs would read values other programs already wrote,
    kernel-edge-cases.md #11-#13), except an exact in-place call (out IS the input's view: same start, shape and
    strides) for inputs named in `in_place`, which every program reads before writing the same elements. The test is
    on byte ranges, so interleaved views that do not really overlap are refused too (conservative, like torch)."""
    eo = _extent(out)
    if eo is None:
        return
    for arg, t in inputs.items():
        et = _extent(t) if t is not out else eo
        if et is None or et[1] <= eo[0] or eo[1] <= et[0]:
            continue
        same = (t.data_ptr() == out.data_ptr() and t.shape == out.shape and t.stride() == out.stride()
                and t.dtype == out.dtype)
        if same and arg in in_place:
            continue
        how = f"only out={arg} itself (in place) is supported" if arg in in_place else "use a separate output"
        raise ValueError(f"{name}: out overlaps {arg} in memory ({how})")


def collapse(shape: tuple[int, ...], *strides: tuple[int, ...]) -> list[tuple[int, list[int]]]:
    """Merge adjacent dimensions that are one dimension in every tensor's layout (outer stride == inner stride ·
    inner size), dropping size-1 dimensions: [(size, [stride of each tensor]), ...], outermost first. A contiguous
    tensor becomes one dimension, a row-sliced or transposed matrix two, h.chunk(2, -1) of (B, S, 2F) two."""
    merged: list[tuple[int, list[int]]] = []
    for i, size in enumerate(shape):
        if size == 1:
            continue
        sts = [st[i] for st in strides]
        if merged and all(prev == st * size for prev, st in zip(merged[-1][1], sts)):
            merged[-1] = (merged[-1][0] * size, sts)
        else:
            merged.append((size, sts))
    return merged


def row_layout(name: str, shape: tuple[int, ...], *strides: tuple[int, ...],
               lead: int = 2) -> tuple[int, tuple[int, ...], list[tuple[int, ...]]]:
    """The leading dimensions (all but the last) of same-shaped tensors as rows, folded into `lead` dimensions that
    do not merge: (M rows, the sizes of the inner lead - 1 of them, [their lead strides per tensor, outermost
    first]). With lead 2, row r is at (r // D1)·s0 + (r % D1)·s1; with 3, at (r // (D1·D2))·s0 + (r // D2 % D1)·s1 +
    (r % D2)·s2. Unused dimensions have size 1 and stride 0. More leading dimensions than `lead` that stay apart are
    refused (call .contiguous())."""
    dims = collapse(shape[:-1], *(st[:-1] for st in strides))
    if len(dims) > lead:
        # every input's strides: the one that does not fold may be any of them (a contiguous x beside a permuted
        # residual was reported by x's strides alone)
        what = (f"a {tuple(shape)} input with strides {strides[0]}" if len(strides) == 1 else
                f"{tuple(shape)} inputs with strides {', '.join(str(st) for st in strides)}")
        words = {2: "two", 3: "three"}.get(lead, str(lead))
        raise ValueError(f"{name}: the leading dimensions of {what} do not fold into {words}; call .contiguous() first")
    M = 1
    for size, _ in dims:
        M *= size
    # outermost first, padded after the real ones with size-1, stride-0 dimensions
    dims = dims + [(1, [0] * len(strides))] * (lead - len(dims)) if dims else [(M, [0] * len(strides))] + [
        (1, [0] * len(strides))] * (lead - 1)
    return M, tuple(size for size, _ in dims[1:]), [tuple(d[1][i] for d in dims) for i in range(len(strides))]


def tma_layout_ok(*ts: torch.Tensor) -> bool:
    """A tensor descriptor needs a contiguous last dimension and 16-byte aligned base and strides (CUDA's
    cuTensorMapEncodeTiled rules)."""
    return all(t.stride(-1) == 1 and t.data_ptr() % 16 == 0
               and all((st * t.element_size()) % 16 == 0 for st in t.stride()[:-1]) for t in ts)


def upcast_dots(target: Target, dtype: torch.dtype) -> bool:
    """bf16 tl.dot is wrong in the interpreter (triton#11584): compute in fp32 there."""
    return target.interpreter and dtype == torch.bfloat16


@contextlib.contextmanager
def no_tf32() -> Iterator[None]:
    """IEEE fp32 products for references: TF32 would make an fp32 reference less exact than the kernel it judges."""
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def first_order_only(backward: Callable[..., Any]) -> Callable[..., Any]:
    """For an autograd.Function's backward that runs Triton kernels: refuse a backward that is itself being recorded
    (create_graph=True, the grad mode a gradient penalty runs it in). Its kernels record no graph, so second-order
    terms would be dropped silently (the gradient of x's gradient w.r.t. the weight, say); torch's
    @once_differentiable does not catch that when the incoming gradient does not require grad."""
    import functools

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        if torch.is_grad_enabled():
            raise RuntimeError(f"{type(ctx).__name__.removesuffix('Backward')}: gradients of gradients "
                               "(create_graph=True) are not supported: its backward runs Triton kernels that record "
                               "no graph")
        return backward(ctx, *grads)

    return wrapper


def refuse_forward_ad(name: str, *tensors: object) -> None:
    """Forward-mode differentiation (torch.func.jvp / jacfwd, forward_ad dual tensors) through a torch.library custom
    op gives a ZERO tangent, silently: the op registers no forward rule and torch raises nothing (fuzz round 2,
    2026-11-23). Refuse it instead, in the custom ops' eager entry points (torch.compile traces them itself).
    An input that is neither a tensor nor None is a TypeError here, before torch's schema check turns it into a
    RuntimeError about the op's C++ signature."""
    if torch.compiler.is_compiling():
        return
    for t in tensors:
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected torch.Tensor inputs, got {type(t).__name__}")
    from torch._C import _functorch
    from torch.autograd import forward_ad

    top = _functorch.peek_interpreter_stack()
    if (top is not None and top.key() == _functorch.TransformType.Jvp) or any(
            isinstance(t, torch.Tensor) and forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        raise RuntimeError(f"{name}: forward-mode differentiation (torch.func.jvp, jacfwd, forward_ad) is not "
                           "supported: its Triton kernels have no forward-mode rule; use reverse mode (.backward() or "
                           "torch.autograd.grad; torch.func's transforms are not supported either)")


@functools.cache
def sm_count(device: torch.device) -> int:
    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def device_cus(dev: torch.device) -> int:
    """SMs (NVIDIA) or CUs (AMD: torch reports them as multi_processor_count) for the split policies; 0 unknown."""
    return sm_count(dev) if dev.type == "cuda" else 0
