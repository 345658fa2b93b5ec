"""Attention forward + backward on a GPU: our Triton kernels (attention.autograd_op: FlashAttention-2 forward with the
row log-sum-exp, then attention_backward.py's Δ, dK/dV and dQ kernels) against torch's SDPA, bf16, both timed with
triton.testing.do_bench over one forward and one backward (gradients reset between runs). Before timing, each shape's
dQ, dK, dV are checked against SDPA's in fp32 on the same (bf16-rounded) inputs: max |ours - ref| / max |ref| per
gradient must stay under --tol.

Shapes: B=4 H=32 S in {1024, 4096} D in {64, 128}, causal and not, plus GQA 32/8 at S=1024/4096 D=128 causal.
FLOPs counted: forward 4·B·H·S²·D, backward 2.5× that (five S×S×D matmuls against two), halved when causal.

Usage: python benchmarks/attention_backward_bench.py [--json PATH] [--tol 0.02] [--quick]
Exit status 1 when a gradient check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
import torch.nn.functional as F


def _shapes(quick: bool) -> list[dict[str, Any]]:
    out = []
    for S in (1024,) if quick else (1024, 4096):
        for D in (64, 128):
            for causal in (False, True):
                out.append({"B": 4, "H": 32, "H_kv": 32, "S": S, "D": D, "causal": causal})
        out.append({"B": 4, "H": 32, "H_kv": 8, "S": S, "D": 128, "causal": True})
    return out


def _inputs(s: dict[str, Any], dev: torch.device) -> tuple[torch.Tensor, ...]:
    g = torch.Generator(device=dev).manual_seed(0)

    def r(h: int) -> torch.Tensor:
        return torch.randn(s["B"], h, s["S"], s["D"], generator=g, device=dev).to(torch.bfloat16)

    return r(s["H"]), r(s["H_kv"]), r(s["H_kv"]), r(s["H"])


def _grads(fn: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor) -> list[torch.Tensor]:
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    fn(*leaves).backward(do.to(leaves[0].dtype))
    return [t.grad for t in leaves if t.grad is not None]


def run_shape(s: dict[str, Any], dev: torch.device, tol: float) -> dict[str, Any]:
    from triton.testing import do_bench

    from rocm_triton_doctor.kernels import attention

    causal, gqa = s["causal"], s["H_kv"] != s["H"]
    q, k, v, do = _inputs(s, dev)

    def ours(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return attention.autograd_op(a, b, c, causal)

    def sdpa(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(a, b, c, is_causal=causal, enable_gqa=gqa)

    got = _grads(ours, q, k, v, do)
    ref = _grads(sdpa, q.float(), k.float(), v.float(), do)  # fp32 SDPA on the same bf16-rounded values
    errs = [float((a.float() - b).abs().max() / b.abs().max().clamp_min(1e-30)) for a, b in zip(got, ref)]
    del ref

    times = {}
    for name, fn in (("ours", ours), ("sdpa", sdpa)):
        leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]

        def step(fn: Any = fn, leaves: list[torch.Tensor] = leaves) -> None:
            fn(*leaves).backward(do)

        times[name] = do_bench(step, grad_to_none=leaves, warmup=10, rep=40)
    flops = 3.5 * 4.0 * s["B"] * s["H"] * s["S"] ** 2 * s["D"] * (0.5 if causal else 1.0)
    return {**s, "ours_ms": times["ours"], "sdpa_ms": times["sdpa"], "vs_sdpa": times["sdpa"] / times["ours"],
            "ours_tflops": flops / times["ours"] / 1e9, "rel_err": {"dq": errs[0], "dk": errs[1], "dv": errs[2]},
            "grads_ok": max(errs) <= tol}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="PATH", help="also write the rows as JSON here")
    ap.add_argument("--tol", type=float, default=2e-2, help="max relative gradient error vs fp32 SDPA [0.02]")
    ap.add_argument("--quick", action="store_true", help="S=1024 only")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("attention_backward_bench: needs a GPU (torch.cuda)", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    rows = []
    print(f"{torch.cuda.get_device_name()} · torch {torch.__version__} · bf16 forward+backward")
    print(f"{'shape':<34} {'ours ms':>9} {'SDPA ms':>9} {'vs SDPA':>8} {'TF/s':>7}  rel err dq/dk/dv")
    for s in _shapes(args.quick):
        r = run_shape(s, dev, args.tol)
        rows.append(r)
        name = f"B{s['B']} H{s['H']}" + (f"/{s['H_kv']}" if s["H_kv"] != s["H"] else "") + \
            f" S{s['S']} D{s['D']}" + (" causal" if s["causal"] else "")
        e = r["rel_err"]
        print(f"{name:<34} {r['ours_ms']:>9.3f} {r['sdpa_ms']:>9.3f} {r['vs_sdpa']:>7.2f}x {r['ours_tflops']:>7.1f}  "
              f"{e['dq']:.1e}/{e['dk']:.1e}/{e['dv']:.1e} {'ok' if r['grads_ok'] else 'FAIL'}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, fh, indent=1)
    return 0 if all(r["grads_ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
