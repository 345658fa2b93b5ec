"""How close can Triton get on this GPU? Our kernels against the best Triton code PyTorch's own compiler generates for
the same problem, and against the vendor libraries (issue #16: attention at 0.62-0.94x SDPA and odd GEMMs at
0.66-0.74x cuBLAS on an H100; is that our kernels, or Triton?).

* attention: ours (forward; forward+backward through autograd_op) against FlexAttention compiled by inductor (a
  Triton template tuned by the PyTorch team; causal through a block mask, GQA through enable_gqa) and SDPA
  (cuDNN / FlashAttention). do_bench medians, L2 flushed; every output checked against SDPA's.
* gemm: ours against inductor's max-autotune GEMM restricted to its Triton templates (`max_autotune_gemm_backends =
  "TRITON"`: every tile config inductor knows for this GPU, benchmarked, the best kept) and cuBLAS; CUDA-graph replay.

Usage (GPU): PYTHONPATH=. python benchmarks/triton_ceiling_probe.py [--part attention|gemm|all] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any
from collections.abc import Callable

import torch
import torch.nn.functional as F
import triton.testing as tt

ATTN = [  # (B, H_q, H_kv, S, D, causal, dtype)
    (4, 32, 32, 1024, 128, False, torch.bfloat16),
    (4, 32, 32, 1024, 128, True, torch.bfloat16),
    (4, 32, 32, 4096, 128, False, torch.bfloat16),
    (4, 32, 32, 4096, 128, True, torch.bfloat16),
    (4, 32, 32, 2048, 64, True, torch.bfloat16),
    (4, 32, 8, 2048, 128, True, torch.bfloat16),
    (4, 32, 32, 2048, 96, False, torch.bfloat16),
    (1, 32, 32, 2048, 128, True, torch.float16),  # the seed preset's row
    (8, 16, 8, 1024, 128, True, torch.bfloat16),  # the medium model's attention (smoke --model medium)
]
GEMM = [(3000, 5120, 3000), (5000, 2048, 5000), (768, 4096, 768), (1000, 8192, 1000), (3072, 4096, 3072),
        (2048, 4096, 11008)]


def _err(x: torch.Tensor, ref: torch.Tensor) -> float:
    return float((x.float() - ref.float()).abs().max() / ref.float().abs().max().clamp_min(1e-6))


def attention_rows() -> list[dict[str, Any]]:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    from rocm_triton_doctor.kernels import attention, attention_autograd

    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    for B, H, Hk, S, D, causal, dt in ATTN:
        q = torch.randn(B, H, S, D, generator=g, device="cuda").to(dt)
        k = torch.randn(B, Hk, S, D, generator=g, device="cuda").to(dt)
        v = torch.randn(B, Hk, S, D, generator=g, device="cuda").to(dt)
        do = torch.randn(B, H, S, D, generator=g, device="cuda").to(dt)
        torch._dynamo.reset()  # a fresh compile per shape (the recompile limit is 8 per function)
        flex = torch.compile(flex_attention, dynamic=False)
        name = f"{str(dt)[6:]} B{B} H{H}/{Hk} S{S} D{D}{' causal' if causal else ''}"
        flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
        row: dict[str, Any] = {"shape": name, "gflop_fwd": flops / 1e9}
        gqa = Hk != H
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        mask = (create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, S, S, device="cuda") if causal else None)
        fwd: dict[str, Callable[[], torch.Tensor]] = {
            "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa),
            "ours": lambda: attention.attention(q, k, v, causal),
            "flex": lambda: flex(q, k, v, block_mask=mask, enable_gqa=gqa),
        }
        for name_, fn in fwd.items():
            try:
                with torch.no_grad():
                    e = _err(fn(), ref)
                    row[f"fwd_{name_}_err"] = e
                    row[f"fwd_{name_}_us"] = tt.do_bench(fn, warmup=25, rep=100) * 1e3 if e < 2e-2 else None
            except Exception as exc:  # noqa: BLE001 - a form that cannot run this shape is reported, not fatal
                row[f"fwd_{name_}_us"] = None
                row[f"fwd_{name_}_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
        qg, kg, vg = (t.detach().clone().requires_grad_() for t in (q, k, v))
        bwd: dict[str, Callable[[], torch.Tensor]] = {
            "sdpa": lambda: F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, enable_gqa=gqa),
            "ours": lambda: attention_autograd.autograd_op(qg, kg, vg, causal),
            "flex": lambda: flex(qg, kg, vg, block_mask=mask, enable_gqa=gqa),
        }
        grads_ref = None
        for name_, fn in bwd.items():
            try:
                o = fn()
                o.backward(do, retain_graph=True)
                grads = [t.grad.clone() for t in (qg, kg, vg)]  # type: ignore[union-attr]
                if grads_ref is None:
                    grads_ref = grads
                e = max(_err(a, r) for a, r in zip(grads, grads_ref))
                row[f"bwd_{name_}_err"] = e
                row[f"bwd_{name_}_us"] = (tt.do_bench(lambda: o.backward(do, retain_graph=True), warmup=25, rep=100,
                                                      grad_to_none=[qg, kg, vg]) * 1e3 if e < 3e-2 else None)
            except Exception as exc:  # noqa: BLE001
                row[f"bwd_{name_}_us"] = None
                row[f"bwd_{name_}_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
            for t in (qg, kg, vg):
                t.grad = None
        rows.append(row)
        print(_attn_line(row), flush=True)
    return rows


def _ratio(a: Any, b: Any) -> str:
    return f"{b / a:5.2f}x" if isinstance(a, float) and isinstance(b, float) else "   - "


def _attn_line(r: dict[str, Any]) -> str:
    cells = []
    for part in ("fwd", "bwd"):
        s, o, f = (r.get(f"{part}_{n}_us") for n in ("sdpa", "ours", "flex"))
        cells.append(f"{part}: sdpa {s or 0:8.1f} ours {o or 0:8.1f} flex {f or 0:8.1f} us | ours/sdpa "
                     f"{_ratio(o, s)} flex/sdpa {_ratio(f, s)} ours/flex {_ratio(o, f)}")
    return f"{r['shape']:34} " + " || ".join(cells)


def gemm_rows() -> list[dict[str, Any]]:
    import torch._inductor.config as ic

    from rocm_triton_doctor.kernels import gemm

    ic.max_autotune_gemm_backends = "TRITON"
    ic.max_autotune = True
    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    for M, K, N in GEMM:
        a = torch.randn((M, K), generator=g, device="cuda").to(torch.bfloat16)
        b = (torch.randn((K, N), generator=g, device="cuda") * K ** -0.5).to(torch.bfloat16)
        ref = a.float() @ b.float()
        row: dict[str, Any] = {"shape": f"bf16 {M}x{K}x{N}", "waves_128x256": math.ceil(M / 128) * math.ceil(N / 256)
                               / torch.cuda.get_device_properties(0).multi_processor_count}
        t0 = time.perf_counter()
        inductor = torch.compile(lambda x, y: x @ y, dynamic=False, mode="max-autotune-no-cudagraphs")
        forms = {"cublas": lambda: a @ b, "ours": lambda: gemm.gemm(a, b), "inductor_triton": lambda: inductor(a, b)}
        for name, fn in forms.items():
            try:
                e = _err(fn(), ref)
                row[f"{name}_err"] = e
                row[f"{name}_us"] = tt.do_bench_cudagraph(fn, rep=50) * 1e3 if e < 2e-2 else None
            except Exception as exc:  # noqa: BLE001
                row[f"{name}_us"] = None
                row[f"{name}_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
        row["compile_s"] = time.perf_counter() - t0
        torch._dynamo.reset()
        rows.append(row)
        c, o, i = (row.get(f"{n}_us") for n in ("cublas", "ours", "inductor_triton"))
        print(f"{row['shape']:24} waves {row['waves_128x256']:5.2f} cublas {c or 0:8.1f} ours {o or 0:8.1f} "
              f"inductor-triton {i or 0:8.1f} us | ours/cublas {_ratio(o, c)} inductor/cublas {_ratio(i, c)} "
              f"ours/inductor {_ratio(o, i)}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("attention", "gemm", "all"), default="all")
    ap.add_argument("--json")
    args = ap.parse_args()
    import triton

    out: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                           "triton": triton.__version__, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(out, flush=True)
    if args.part in ("attention", "all"):
        out["attention"] = attention_rows()
    if args.part in ("gemm", "all"):
        out["gemm"] = gemm_rows()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
