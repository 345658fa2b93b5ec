"""Random layouts through the row, elementwise and bias+GELU kernels (1-5 dims: up to three leading dims apart, and
four, which must be refused; expanded dims, offsets), twice per signature with call plans on (call_plans.GPU_ONLY
off, so the second call comes from its plan), with looped, packed and split configs, and gemm on (..., K)
activations; each output against an fp64 reference with the tolerance table. CPU, the interpreter.

    python benchmarks/random_layouts_run.py SECONDS SEED
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from rocm_triton_doctor.kernels import (add_mul, bias_gelu_dropout_residual, call_plans, gemm, layernorm,  # noqa: E402
                                        rmsnorm, softmax, swiglu)
from tests.kernels.helpers import assert_matches, strided_tensor  # noqa: E402

DT = [torch.float32, torch.bfloat16, torch.float16]
CONFIGS: list[dict[str, Any] | None] = [None, None, {"BLOCK": 8, "ROWS": 1, "num_warps": 4},
                                        {"BLOCK": 16, "ROWS": 4, "num_warps": 4},
                                        {"BLOCK": 4, "ROWS": 1, "num_warps": 4, "SPLIT": 2}]
GEMM_TOL = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 5e-3}


def layout(r: random.Random, nd: int) -> dict[str, Any]:
    perm = list(range(nd))
    r.shuffle(perm)
    return {"perm": tuple(perm), "pad": tuple(r.randint(0, 2) for _ in range(nd)),
            "step": tuple(r.randint(1, 2) for _ in range(nd)), "offset": r.randint(0, 3),
            "expand": tuple(r.random() < 0.15 for _ in range(nd))}


def jobs(r: random.Random) -> list[tuple[str, Any, Any, torch.dtype]]:
    nd = r.randint(1, 5)
    shape = tuple(r.randint(1, 4) for _ in range(nd - 1)) + (r.randint(1, 70),)
    dt = r.choice(DT)
    gen = torch.Generator().manual_seed(r.randint(0, 2**30))
    x, y = (strided_tensor(shape, dt, gen, **layout(r, nd)) for _ in range(2))
    n = shape[-1]
    w, b = (strided_tensor((n,), r.choice([dt, torch.float32]), gen, **layout(r, 1)) for _ in range(2))
    cfg = r.choice(CONFIGS)
    xd, yd, wd, bd = x.double(), y.double(), w.double(), b.double()
    out = [
        ("rmsnorm", lambda: rmsnorm.rmsnorm(x, w, config=cfg),
         lambda: xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-6) * wd, dt),
        ("layernorm", lambda: layernorm.layernorm(x, w, b, config=cfg), lambda: F.layer_norm(xd, (n,), wd, bd, 1e-5), dt),
        ("softmax", lambda: softmax.softmax(x, config=cfg), lambda: torch.softmax(xd, -1), dt),
        ("add_mul", lambda: add_mul.add_mul(x, y, x), lambda: (xd + yd) * xd, dt),
        ("swiglu", lambda: swiglu.swiglu(x, y), lambda: F.silu(xd) * yd, dt),
        ("bgdr", lambda: bias_gelu_dropout_residual.bias_gelu_dropout_residual(x, b, y),
         lambda: yd + F.gelu(xd + bd, approximate="tanh"), dt),
    ]
    if nd >= 2:
        wt = strided_tensor((r.randint(1, 40), n), dt, gen, **layout(r, 2)).t()
        out.append(("gemm", lambda: gemm.gemm(x, wt), lambda: (xd @ wt.double(), xd.abs() @ wt.double().abs()), dt))
    return [(name, fn, ref, d, cfg) for name, fn, ref, d in out]  # type: ignore[misc]


def check(name: str, got: torch.Tensor, ref: Any, dt: torch.dtype) -> None:
    if name != "gemm":
        assert_matches(got, ref, dt)
        return
    want, scale = ref
    assert got.shape == want.shape, (got.shape, want.shape)
    err = ((got.double() - want).abs() / scale.clamp_min(1e-6)).max().item() if got.numel() else 0.0
    assert err < GEMM_TOL[dt], err


def main() -> None:
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    call_plans.GPU_ONLY = False
    r = random.Random(seed)
    counts: dict[str, int] = {}
    refused: dict[str, int] = {}
    wrong: list[Any] = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        for name, fn, ref, dt, cfg in jobs(r):
            for _ in range(2 if cfg is None else 1):  # a signature's second call comes from its plan
                try:
                    got = fn()
                except ValueError as exc:
                    if "do not fold" in str(exc):
                        refused[name] = refused.get(name, 0) + 1
                    else:
                        wrong.append((name, dt, cfg, f"refused: {str(exc)[:120]}"))
                    break
                try:
                    check(name, got, ref(), dt)
                    counts[name] = counts.get(name, 0) + 1
                except AssertionError as exc:
                    wrong.append((name, dt, cfg, str(exc)[:200]))
    print("cases", counts, "total", sum(counts.values()))
    print("refused (layouts that do not fold)", refused)
    print("wrong", len(wrong))
    for w in wrong[:20]:
        print("  ", w)


if __name__ == "__main__":
    main()
