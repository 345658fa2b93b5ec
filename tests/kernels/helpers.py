"""Shared helpers for tests/kernels: a spec's interpreter cases, checking one against its reference, and running a
script on the GPU outside the interpreter (the GPU-marked tests)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import json
import subprocess
import sys
from typing import Any

import torch

from rocm_triton_doctor.kernels.base import Case, KernelSpec
from rocm_triton_doctor.kernels.policy import target_for_device
from rocm_triton_doctor.smoke import correctness

CPU = torch.device("cpu")


def interpreter_cases(spec: KernelSpec) -> list[Case]:
    return spec.cases("quick", target_for_device("cpu"))


def check_in_interpreter(case: Case) -> None:
    gen = torch.Generator().manual_seed(7)
    inputs = case.setup(CPU, gen)
    v = correctness.check_case(case, inputs, CPU, tf32=False)
    assert v.ok, v.problems


# --- property-based testing: layouts, values and the fp64 comparison -------------------------------------------------

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
LARGE = {torch.float16: 3e4, torch.bfloat16: 1e15, torch.float32: 1e15}  # big, but sums of x² stay finite in fp32


def strided_tensor(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator, *, perm: tuple[int, ...],
                   pad: tuple[int, ...], step: tuple[int, ...], offset: int, expand: tuple[bool, ...] = (),
                   special: str = "none", scale: float = 1.0) -> torch.Tensor:
    """A tensor of `shape` laid out as a view: stored in dimension order `perm`, each dimension sliced with `step` out
    of a bigger one (+`pad`), starting `offset` elements in, and dimensions marked in `expand` broadcast (stride 0).
    `special` puts NaN / ±inf / large values at a few places."""
    nd = len(shape)
    expand = expand or (False,) * nd
    real = [1 if expand[d] else shape[d] for d in range(nd)]
    stored = [real[perm[i]] * step[perm[i]] + pad[perm[i]] for i in range(nd)]
    numel = 1
    for s in stored:
        numel *= s
    flat = torch.randn(numel + offset, generator=gen, dtype=torch.float64) * scale
    base = flat[offset:].reshape(stored) if nd else flat[offset:offset + 1].reshape(())
    idx = tuple(slice(0, real[perm[i]] * step[perm[i]], step[perm[i]]) for i in range(nd))
    view = base[idx].permute(*[perm.index(d) for d in range(nd)]) if nd else base
    if special != "none" and view.numel():
        n_special = max(1, view.numel() // 17)
        pos = torch.randint(0, view.numel(), (n_special,), generator=gen)
        value = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "large": LARGE[dtype]}[special]
        v = view.clone().flatten()  # mark values on a dense copy, then write them back through the view
        v[pos] = value
        view.copy_(v.reshape(view.shape))
    t = flat.to(dtype)[offset:].reshape(stored) if nd else flat.to(dtype)[offset:offset + 1].reshape(())
    t = t[idx].permute(*[perm.index(d) for d in range(nd)]) if nd else t
    return t.expand(*shape) if any(expand) else t


def layouts(draw: Any, nd: int, allow_expand: bool = True) -> dict[str, Any]:
    """Draw the layout arguments of strided_tensor for an nd-dimensional tensor (hypothesis `draw`)."""
    from hypothesis import strategies as st

    return {"perm": tuple(draw(st.permutations(range(nd)))) if nd else (),
            "pad": tuple(draw(st.lists(st.integers(0, 2), min_size=nd, max_size=nd))),
            "step": tuple(draw(st.lists(st.integers(1, 2), min_size=nd, max_size=nd))),
            "offset": draw(st.integers(0, 3)),
            "expand": tuple(draw(st.lists(st.booleans(), min_size=nd, max_size=nd))) if allow_expand
            else (False,) * nd}


def assert_matches(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> None:
    """out against an fp64 reference with the tolerance table (kernels/tolerances.py): the reference is rounded to the
    output dtype first (so a value past its range must come out as inf of the right sign), NaN exactly where the
    reference has NaN, and |out - ref| <= atol + rtol·|ref| elsewhere."""
    from rocm_triton_doctor.kernels.base import dtype_name
    from rocm_triton_doctor.kernels.tolerances import tolerance

    tol = tolerance(dtype_name(dtype))
    assert out.dtype == dtype and out.shape == ref.shape, (out.dtype, tuple(out.shape), tuple(ref.shape))
    o = out.double()
    r = ref.to(dtype).double()
    near_max = ref.abs() > 0.99 * torch.finfo(dtype).max  # rounding at the edge of the range may go either way
    nan_bad = torch.isnan(o) != torch.isnan(r)
    assert not nan_bad.any(), f"{int(nan_bad.sum())} NaN mismatches, first at {nan_bad.nonzero()[0].tolist()}"
    inf_bad = (torch.isinf(o) | torch.isinf(r)) & (o != r) & ~near_max & ~torch.isnan(r)
    assert not inf_bad.any(), f"{int(inf_bad.sum())} inf mismatches, e.g. got {o[inf_bad][:3]} want {r[inf_bad][:3]}"
    fin = torch.isfinite(o) & torch.isfinite(r)
    bad = fin & ((o - r).abs() > tol.atol + tol.rtol * r.abs())
    assert not bad.any(), (f"{int(bad.sum())} of {o.numel()} outside tolerance; worst abs "
                           f"{float((o - r)[fin].abs().max()):.3g}")


SPECIALS = ("none", "none", "none", "nan", "inf", "-inf", "large")


def row_inputs(draw: Any, max_n: int = 70) -> dict[str, Any]:
    """A row kernel's x (1-4 dims, any layout, special values), a launch config forcing the looped and packed paths
    half the time, and a seed for the values."""
    from hypothesis import strategies as st

    nd = draw(st.integers(1, 4))  # up to three leading dimensions (a (B, H, S, D) tensor transposed keeps three apart)
    lead = st.integers(1, 4 if nd < 4 else 3)
    shape = tuple(draw(st.lists(lead, min_size=nd - 1, max_size=nd - 1))) + (draw(st.integers(1, max_n)),)
    dtype = draw(st.sampled_from(DTYPES))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    x = strided_tensor(shape, dtype, gen, **layouts(draw, nd), special=draw(st.sampled_from(SPECIALS)),
                       scale=draw(st.sampled_from([1.0, 1.0, 100.0])))
    config = draw(st.sampled_from([None, {"BLOCK": 8, "ROWS": 1, "num_warps": 4}, {"BLOCK": 16, "ROWS": 4, "num_warps": 4},
                                   {"BLOCK": 128, "ROWS": 2, "num_warps": 4}]))
    return {"x": x, "dtype": dtype, "gen": gen, "config": config, "N": shape[-1]}


def param_vector(draw: Any, n: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """A per-column parameter (weight/bias): x's dtype or fp32 (mixed precision), any stride, or expanded."""
    from hypothesis import strategies as st

    pdt = draw(st.sampled_from([dtype, torch.float32]))
    return strided_tensor((n,), pdt, gen, **layouts(draw, 1))


def same_shape_inputs(draw: Any, count: int, max_dim: int = 40) -> tuple[list[torch.Tensor], torch.dtype]:
    """`count` same-shaped, same-dtype tensors (0-4 dims, each its own layout, special values) for elementwise
    kernels."""
    from hypothesis import strategies as st

    nd = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, max_dim) if nd == 1 else st.integers(1, 9 if nd < 4 else 5), min_size=nd,
                                max_size=nd)))
    dtype = draw(st.sampled_from(DTYPES))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    ts = [strided_tensor(shape, dtype, gen, **layouts(draw, nd), special=draw(st.sampled_from(SPECIALS)))
          for _ in range(count)]
    return ts, dtype


def gpu_script_json(code: str, timeout: int = 600) -> Any:
    """Run `python -c code` in a subprocess without TRITON_INTERPRET (this package sets it for the interpreter tests,
    and a GPU run must not inherit it); the script's last stdout line, parsed as JSON. Fails the test with the
    script's stderr when it exits non-zero."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


class FakeDriver:
    """Triton's active driver for the launch-path tests (test_launch, test_launch_site): device 0, stream 77."""

    def __init__(self) -> None:
        self.active = self

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int) -> int:
        return 77


class FakeBackend:
    """A backend with native tensor specialisation (CUDA's kind), for a JITFunction's device cache."""

    supports_native_tensor_specialization = True
