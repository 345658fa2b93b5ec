"""O(1) argument checks shared by the GEMM and attention launchers: what a model can pass that the kernels must refuse
clearly (meta tensors, autograd inputs, aliasing outputs, bad seeds and tiles), the 64-bit-offset test, and the fresh
dropout seed. Each check looks at shapes, strides and pointers only: no device work, no allocation."""

from __future__ import annotations

import numbers
from typing import Any

import torch

INT32_LIMIT = 2**31


def check_tensors(name: str, *, optional: tuple[str, ...] = ("bias", "out"), **tensors: torch.Tensor | None
                  ) -> torch.device:
    """Every named argument is a tensor (or None where its name is in `optional`), holds data (not `meta`), and
    carries no autograd history to lose: these plain calls record no backward (the modules' autograd_op do), so an
    input that requires grad under grad mode would come back detached and training would silently stop its gradients
    (kernel-edge-cases.md #9). All on one device, which is returned (CPU only under the interpreter): what
    base.check_device checks, in the same pass (gemm and attention had run both, ~1 µs of host time a call)."""
    grad = torch.is_grad_enabled()
    dev = None
    for arg, t in tensors.items():
        if t is None and arg in optional:
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: {arg} must be a torch.Tensor, got {type(t).__name__}")
        if t.is_meta:
            raise ValueError(f"{name}: {arg} is on the meta device (no data to compute with)")
        if grad and t.requires_grad:
            raise ValueError(f"{name}: {arg} requires grad, but this call records no backward (the output would come "
                             f"back detached): for gradients use the kernel module's autograd_op where it has one, "
                             f"or call it under torch.no_grad(), or pass {arg}.detach()")
        if dev is None:
            dev = t.device
        elif t.device != dev:
            raise ValueError(f"{name}: all tensors must be on one device, got {t.device} and {dev}")
    assert dev is not None, "check_tensors needs at least one tensor that is not optional"
    if dev.type == "cpu":
        from rocm_triton_doctor.kernels.policy import interpreter_active

        if not interpreter_active():
            raise ValueError(f"{name}: CPU tensors need TRITON_INTERPRET=1 (use a GPU tensor or the interpreter)")
    return dev


def tensors_only(name: str, **tensors: Any) -> None:
    """TypeError naming the first argument that is not a tensor: the autograd forms' first check (they take inputs
    that require grad, so check_tensors' refusal of those does not apply), before anything reads a shape."""
    for arg, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: {arg} must be a torch.Tensor, got {type(t).__name__}")


def max_offset(t: torch.Tensor, padded: tuple[int, ...] | None = None) -> int:
    """The largest element offset a kernel computes for `t` (torch strides are never negative). `padded`: the sizes
    rounded up to the kernel's blocks, since masked-off lanes compute offsets too."""
    sizes = padded if padded is not None else tuple(t.shape)
    return sum(max(s - 1, 0) * st for s, st in zip(sizes, t.stride()))


def _extent(t: torch.Tensor) -> tuple[int, int]:
    start = t.data_ptr()
    return start, start + (max_offset(t) + 1) * t.element_size()


def _distinct_elements(t: torch.Tensor) -> bool:
    """Sufficient test that no two elements share an address: with the dims of size > 1 ordered by stride, each
    stride passes the largest offset the smaller ones reach (true for every dense, transposed, sliced or strided
    view; false for expanded ones)."""
    reach = 0
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz > 1):
        if stride <= reach:
            return False
        reach += (size - 1) * stride
    return True


def overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The byte ranges of two non-empty tensors intersect (conservative: interleaved disjoint views count too)."""
    alo, ahi = _extent(a)
    blo, bhi = _extent(b)
    return alo < bhi and blo < ahi


def check_out(name: str, out: torch.Tensor, shape: tuple[int, ...], dtypes: tuple[torch.dtype, ...],
              device: torch.device, *inputs: torch.Tensor | None) -> torch.Tensor:
    """`out=` of the right shape, dtype and device, with no two elements at one address, and sharing no memory with
    any input: an output written while other programs still read the same bytes gives wrong values
    (kernel-edge-cases.md #11, #12; torch refuses the same overlaps). Byte ranges are compared, so two interleaved but
    disjoint views of one buffer are refused too: conservative, never wrong."""
    if tuple(out.shape) != tuple(shape) or out.dtype not in dtypes or out.device != device:
        names = " or ".join(str(d).replace("torch.", "") for d in dtypes)
        raise ValueError(f"{name}: out must be a {names} tensor of shape {tuple(shape)} on {device}, got "
                         f"{out.dtype} {tuple(out.shape)} on {out.device}")
    if out.numel() == 0:
        return out
    if not _distinct_elements(out):
        raise ValueError(f"{name}: out has elements that share memory (an expanded or overlapping view)")
    lo, hi = _extent(out)
    for t in inputs:
        if t is None or t.numel() == 0:
            continue
        tlo, thi = _extent(t)
        if lo < thi and tlo < hi:
            raise ValueError(f"{name}: out shares memory with an input; write to a separate tensor")
    return out


def fold_rows(name: str, what: str, t: torch.Tensor, keep: int = 1, noun: str = "row") -> torch.Tensor:
    """A tensor's leading dimensions (all but its last `keep`) as one, without a copy: (..., K) as the (rows, K) view
    (F.linear's activations, a 1-D vector as one row), or with keep=3 SDPA's (..., H, S, D) as (B, H, S, D). Refused
    when the leading dimensions do not share one stride (a transposed (S, B, K) view): the caller decides whether a
    copy is worth it. `noun` names the folded dimension in the refusal."""
    lead = 1
    for d in t.shape[:-keep]:
        lead *= d
    kept = tuple(t.shape[-keep:])
    try:
        return t.view(lead, *kept)
    except RuntimeError:
        raise ValueError(f"{name}: the leading dimensions of {what} {tuple(t.shape)} with strides {t.stride()} do not "
                         f"fold into one {noun} dimension; call .reshape(-1, {', '.join(map(str, kept))}) first "
                         "(a copy)") from None


def dropout_seed(name: str, seed: object, p: float) -> int:
    """An explicit int seed gives the same mask every call (reproducible). None draws a fresh 31-bit seed from torch's
    default CPU generator, so every call gets a new mask like F.dropout and torch.manual_seed still reproduces a run
    (kernel-edge-cases.md #10). Anything else is a TypeError, not an interpreter trace (#19)."""
    if seed is None:
        return int(torch.randint(0, INT32_LIMIT - 1, (1,)).item()) if p > 0.0 else 0
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name}: seed must be an int or None, got {type(seed).__name__}")
    s = int(seed)
    if not -(2**63) <= s < 2**63:
        raise ValueError(f"{name}: seed must fit in 64 bits, got {s}")
    return s


def check_block(name: str, key: str, value: object, lo: int = 16, hi: int = 1024) -> int:
    """A tile size: an int power of two in [lo, hi] (tl.arange needs a power of two, tl.dot at least 16)."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi or value & (value - 1):
        raise ValueError(f"{name}: {key} must be a power of two in [{lo}, {hi}], got {value!r}")
    return value


def check_int(name: str, key: str, value: object, lo: int, hi: int) -> int:
    """A launch option that is a count, not a tile (num_stages, SPLIT_K, GROUP_M, SPLIT): an int in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name}: {key} must be an int in [{lo}, {hi}], got {value!r}")
    return value


def check_config_dict(name: str, config: object) -> None:
    """A `config=` override is a dict (or None): checked before anything reads a key from it (a float had raised
    AttributeError in gemm and "not iterable" in attention)."""
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"{name}: config must be a dict, got {type(config).__name__}")


ROW_CONFIG_KEYS = ("BLOCK", "ROWS", "num_warps", "num_stages", "SPLIT", "WINDOW", "TABLE")


def check_row_config(name: str, config: dict[str, Any], rows: bool = True) -> dict[str, Any]:
    """A row kernel's `config=` override (tests, tuning): BLOCK and ROWS powers of two, num_warps a power of two up
    to 32, SPLIT (programs per looped row, rows_split.py; softmax and RMSNorm) an int, WINDOW and TABLE (the 16-byte
    window form and its parameters' tables, rows_window.py; rows.prepare reads them), no unknown keys; a copy, never
    the caller's dict. rows=False: the backward's, whose programs take one row at a time (ROWS, SPLIT, WINDOW and
    TABLE are ignored there)."""
    check_config_dict(name, config)
    unknown = set(config) - set(ROW_CONFIG_KEYS)
    if unknown:
        raise ValueError(f"{name}: unknown config keys {sorted(unknown)} (use {', '.join(ROW_CONFIG_KEYS)})")
    cfg = {"ROWS": 1, "num_warps": 4, **config}
    check_block(name, "BLOCK", cfg.get("BLOCK"), lo=1, hi=1 << 20)
    check_block(name, "ROWS", cfg["ROWS"], lo=1, hi=1024)
    check_block(name, "num_warps", cfg["num_warps"], lo=1, hi=32)
    for key, hi in (("SPLIT", 4096), ("num_stages", 8)):
        if key in cfg:
            check_int(name, key, cfg[key], 1, hi)
    if not rows:
        cfg.pop("ROWS")
        for key in ("SPLIT", "WINDOW", "TABLE"):  # as ROWS: a backward program walks one whole row, as it is
            cfg.pop(key, None)
    return cfg



def check_choice(name: str, key: str, value: object, choices: tuple[str, ...] | dict[str, Any]) -> str:
    """A string option (gemm's epilogue, kernel, precision; LCE's reduction): one of `choices`, else a ValueError
    naming them (an unhashable value had been a bare "unhashable type" TypeError, a non-string torch's op-schema
    RuntimeError in the custom-op forms)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name}: {key} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_flag(name: str, key: str, value: object) -> bool:
    """A yes/no argument (attention's causal): True/False or what equals them (numpy.bool_, 0, 1), never any truthy
    object: causal="False" had silently run causal attention (fuzz round 3); SDPA's is_causal refuses it too."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, (str, bytes)):
        try:
            if value == True or value == False:  # noqa: E712 (equality on purpose: numpy.bool_, 0, 1)
                return bool(value)
        except (TypeError, ValueError, RuntimeError):  # e.g. a tensor of several elements
            pass
    raise TypeError(f"{name}: {key} must be True or False, got {value!r}")
