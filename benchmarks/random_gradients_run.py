"""Random layouts through every autograd op's backward (RMSNorm, LayerNorm, softmax, SwiGLU, bias+GELU+residual,
the GEMM's epilogues, attention with GQA and causal masks): inputs contiguous, transposed, sliced out of wider rows or
one element off; up to two leading dims; 16-bit activations with fp32 parameters; output gradients contiguous,
transposed or expanded from one number. The output and every gradient against fp64 autograd of torch's own function
(error relative to the largest reference value, within the dtype's bound). Inputs the ops refuse with their documented
message (a GEMM activation whose leading dims do not fold into one row stride) are counted, not failed. CPU, the
interpreter's own policy, or with --sm90 the plans an H100/H200 makes (gpu_policy_interpreter_run.pretend_sm90: its
tiles, splits, copies and launch plans, in the interpreter).

    python benchmarks/random_gradients_run.py SECONDS SEED [--sm90]
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from rocm_triton_doctor.kernels import (attention, bias_gelu_dropout_residual, gemm_autograd, layernorm,  # noqa: E402
                                        rmsnorm, softmax, swiglu)

# relative to the largest reference value; GEMM and attention gradients sum K or S products of rounded factors
TOL = {torch.float32: 2e-3, torch.bfloat16: 0.1, torch.float16: 0.02}
SUMS = 3
REFUSED = "do not fold into one row dimension"
Case = tuple[str, list[torch.Tensor], Callable[..., torch.Tensor], Callable[..., torch.Tensor], float]


def leaf(r: random.Random, g: torch.Generator, shape: tuple[int, ...], dt: torch.dtype) -> torch.Tensor:
    """A leaf of `shape`: contiguous, its last two dims transposed, sliced out of wider rows, or one element off."""
    kind = r.choice(("c", "c", "t", "slice", "off"))
    if kind == "t" and len(shape) >= 2:
        t = torch.randn(*shape[:-2], shape[-1], shape[-2], generator=g).to(dt).transpose(-1, -2)
    elif kind == "slice":
        t = torch.randn(*shape[:-1], shape[-1] + r.randint(1, 7), generator=g).to(dt)[..., :shape[-1]]
    elif kind == "off":
        n = 1
        for s in shape:
            n *= s
        t = torch.randn(n + 1, generator=g).to(dt)[1:].view(*shape)
    else:
        t = torch.randn(*shape, generator=g).to(dt)
    return t.detach().requires_grad_()


def output_grad(r: random.Random, g: torch.Generator, y: torch.Tensor) -> torch.Tensor:
    kind = r.choice(("c", "c", "t", "expanded"))
    if kind == "expanded":  # what y.sum().backward() hands the op
        return torch.randn((), generator=g).to(y.dtype).expand(y.shape)
    if kind == "t" and y.dim() >= 2:
        return torch.randn(*y.shape[:-2], y.shape[-1], y.shape[-2], generator=g).to(y.dtype).transpose(-1, -2)
    return torch.randn(y.shape, generator=g).to(y.dtype)


def draw(r: random.Random, g: torch.Generator) -> Case:
    op = r.choice(("rmsnorm", "layernorm", "softmax", "swiglu", "bias_gelu", "attention", "gemm"))
    dt = r.choice((torch.float32, torch.bfloat16, torch.float16))
    pdt = r.choice((dt, torch.float32))  # parameters: the activations' dtype or fp32
    lead = tuple(r.randint(1, 3) for _ in range(r.randint(0, 2)))
    M, N = r.randint(1, 40), r.choice((r.randint(1, 64), r.randint(65, 700)))
    tol = TOL[dt]
    if op == "rmsnorm":
        return (op, [leaf(r, g, lead + (M, N), dt), leaf(r, g, (N,), pdt)], rmsnorm.rmsnorm_autograd,
                lambda x, w: F.rms_norm(x, (N,), w, 1e-6), tol)
    if op == "layernorm":
        return (op, [leaf(r, g, lead + (M, N), dt), leaf(r, g, (N,), pdt), leaf(r, g, (N,), pdt)],
                layernorm.layernorm_autograd, lambda x, w, b: F.layer_norm(x, (N,), w, b, 1e-5), tol)
    if op == "softmax":
        return op, [leaf(r, g, lead + (M, N), dt)], softmax.softmax_autograd, lambda x: torch.softmax(x, -1), tol
    if op == "swiglu":
        return (op, [leaf(r, g, lead + (M, N), dt), leaf(r, g, lead + (M, N), dt)], swiglu.swiglu_autograd,
                lambda a, b: F.silu(a) * b, tol)
    if op == "bias_gelu":
        return (op, [leaf(r, g, lead + (M, N), dt), leaf(r, g, (N,), pdt), leaf(r, g, lead + (M, N), dt)],
                bias_gelu_dropout_residual.bias_gelu_dropout_residual_autograd,
                lambda x, b, res: F.gelu(x + b, approximate="tanh") + res, tol)
    if op == "gemm":
        K = r.randint(1, 60)
        epi = r.choice(("bias", "bias_relu", "bias_gelu"))
        linear = r.random() < 0.5  # the weight as nn.Linear keeps it, (N, K), passed transposed

        def ours(a: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
            return gemm_autograd.gemm_autograd(a, w.t() if linear else w, bias, epi)

        def ref(a: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
            y = a @ (w.t() if linear else w) + bias
            return torch.relu(y) if epi == "bias_relu" else F.gelu(y, approximate="tanh") if epi == "bias_gelu" else y
        w = leaf(r, g, (N, K) if linear else (K, N), dt)
        return (f"gemm {epi}{' B^T' if linear else ''}", [leaf(r, g, lead + (M, K), dt), w, leaf(r, g, (N,), pdt)],
                ours, ref, tol * SUMS)
    B, hk = r.randint(1, 2), r.randint(1, 2)
    hq = hk * r.randint(1, 3)
    sq, sk, d = r.randint(1, 70), r.randint(1, 70), r.choice((16, 32, 64, 80, 96, 128))
    causal = r.random() < 0.5
    sk = max(sk, sq) if causal else sk  # SDPA's causal mask is top-left aligned: no fully masked query rows
    return (f"attention{' causal' if causal else ''} GQA {hq}/{hk}",
            [leaf(r, g, (B, hq, sq, d), dt), leaf(r, g, (B, hk, sk, d), dt), leaf(r, g, (B, hk, sk, d), dt)],
            lambda q, k, v: attention.autograd_op(q, k, v, causal),
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hk), tol * SUMS)


def check(r: random.Random, g: torch.Generator, leaves: list[torch.Tensor], ours: Callable[..., torch.Tensor],
          ref: Callable[..., torch.Tensor], tol: float) -> None:
    y = ours(*leaves)
    dy = output_grad(r, g, y)
    y.backward(dy)
    doubles = [t.detach().double().requires_grad_() for t in leaves]
    yr = ref(*doubles)
    yr.backward(dy.double())
    err = float((y.detach().double() - yr.detach()).abs().max()) / max(1.0, float(yr.detach().abs().max()))
    assert err <= tol, f"output off by {err:.3g}"
    for i, (t, tr) in enumerate(zip(leaves, doubles)):
        assert t.grad is not None and tr.grad is not None, f"no gradient for input {i}"
        assert t.grad.dtype == t.dtype and t.grad.shape == t.shape, f"gradient {i}: {t.grad.dtype} {tuple(t.grad.shape)}"
        assert torch.isfinite(t.grad).all(), f"gradient {i} not finite"
        err = float((t.grad.double() - tr.grad).abs().max()) / max(1.0, float(tr.grad.abs().max()))
        assert err <= tol, f"gradient {i} off by {err:.3g}"


def main() -> int:
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    if "--sm90" in sys.argv[3:]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from gpu_policy_interpreter_run import pretend_sm90

        pretend_sm90()
    r, g = random.Random(seed), torch.Generator().manual_seed(seed)
    counts: dict[str, Any] = {"cases": 0, "refused": 0, "failed": 0}
    t0 = time.time()
    while time.time() - t0 < seconds:
        name, leaves, ours, ref, tol = draw(r, g)
        desc = f"{name} " + " ".join(f"{tuple(t.shape)}/{str(t.dtype)[6:]}/{tuple(t.stride())}" for t in leaves)
        counts["cases"] += 1
        try:
            check(r, g, leaves, ours, ref, tol)
        except ValueError as exc:
            if REFUSED in str(exc):
                counts["refused"] += 1
                continue
            counts["failed"] += 1
            print(f"FAIL {desc}: ValueError: {str(exc).splitlines()[0][:200]}", flush=True)
        except Exception as exc:  # noqa: BLE001 - every failure is reported with its case
            counts["failed"] += 1
            print(f"FAIL {desc}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", flush=True)
    print(f"seed {seed}: {counts['cases']} cases in {time.time() - t0:.0f} s, {counts['refused']} refused with the "
          f"documented message, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
