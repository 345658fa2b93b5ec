"""What a smoke case is: inputs, the Triton launch, an fp32 reference, the torch eager baseline, and its cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple
from collections.abc import Callable

import torch

from rocm_triton_doctor.kernels.policy import Target

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
    dev = tensors[0].device
    for t in tensors:
        if t.device != dev:
            raise ValueError(f"{name}: all tensors must be on one device, got {t.device} and {dev}")
    if dev.type == "cpu":
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


def check_p(p: float) -> float:
    if not (0.0 <= float(p) < 1.0):
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    return float(p)


def dropout_args(p: float) -> tuple[int, float]:
    """(16-bit threshold, scale) for common.dropout_tile: keep when 16 random bits >= round(p·65536); kept values are
    multiplied by 1/(1-p_effective), p_effective = threshold/65536, so the expectation is preserved exactly."""
    t = min(int(round(p * 65536)), 65535)
    return t, 1.0 / (1.0 - t / 65536)


def prepare_out(out: torch.Tensor | None, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    if out is None:
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if tuple(out.shape) != tuple(shape) or out.dtype != like.dtype or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous {like.dtype} tensor of shape {shape}")
    return out


def tma_layout_ok(*ts: torch.Tensor) -> bool:
    """A tensor descriptor needs a contiguous last dimension and 16-byte aligned base and strides (CUDA's
    cuTensorMapEncodeTiled rules)."""
    return all(t.stride(-1) == 1 and t.data_ptr() % 16 == 0
               and all((st * t.element_size()) % 16 == 0 for st in t.stride()[:-1]) for t in ts)


def upcast_dots(target: Target, dtype: torch.dtype) -> bool:
    """bf16 tl.dot is wrong in the interpreter (triton#11584): compute in fp32 there."""
    return target.interpreter and dtype == torch.bfloat16
