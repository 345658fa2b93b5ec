"""A/B of the attention kernels' stride divisor (attention.row_strides, session 16): the pointer forward and the
backward with DIV as the launcher computes it against DIV = 1 (the strides passed whole, as before), for head dims
whose row strides are multiples of 8 but not 16 (40, 72) and a control (64). GPU time by do_bench (L2 flushed);
each variant's outputs and gradients are checked against SDPA's in fp32 with the tolerance table.

Usage: PYTHONPATH=. python benchmarks/attention_div_ab.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
from triton.testing import do_bench

from rocm_triton_doctor.kernels import attention, attention_backward
from rocm_triton_doctor.kernels.tolerances import tolerance

_REAL = attention.row_strides


def _whole(*ts: torch.Tensor) -> tuple[int, list[int]]:
    """DIV = 1: every stride as it is (the launch before session 16)."""
    _div, st = _REAL(*ts)
    return 1, [v * (_div if i % 4 != 3 else 1) for i, v in enumerate(st)]


def _use(fn: Any) -> None:
    attention.row_strides = fn
    attention_backward.row_strides = fn
    attention.clear_plans()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    for D in (40, 72, 64):
        for causal in (False, True):
            B, H, S = 4, 16, 2048
            g = torch.Generator(device="cuda").manual_seed(D)
            q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_()
                       for _ in range(3))
            do = torch.randn_like(q)
            ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            rg = torch.autograd.grad(ref, (q, k, v), do.float())
            tol = tolerance("bfloat16")
            row: dict[str, Any] = {"D": D, "causal": causal, "B": B, "H": H, "S": S}
            for label, fn in (("div1", _whole), ("div", _REAL)):
                _use(fn)
                out = attention.autograd_op(q, k, v, causal)
                grads = torch.autograd.grad(out, (q, k, v), do)
                ok = all(bool(((x.float() - y).abs() <= tol.atol * 4 + tol.rtol * 4 * y.abs()).all())
                         for x, y in zip((out, *grads), (ref, *rg)))
                fwd = do_bench(lambda: attention.attention(q.detach(), k.detach(), v.detach(), causal), rep=50)
                fb = do_bench(lambda: torch.autograd.grad(attention.autograd_op(q, k, v, causal), (q, k, v), do),
                              rep=50)
                row[label] = {"fwd_us": fwd * 1e3, "fwd_bwd_us": fb * 1e3, "ok": ok,
                              "DIV": fn(q, k, v, q)[0]}
            _use(_REAL)
            rows.append(row)
            print(f"D{D} {'causal' if causal else 'full  '} fwd {row['div1']['fwd_us']:8.1f} -> {row['div']['fwd_us']:8.1f} us"
                  f"  fwd+bwd {row['div1']['fwd_bwd_us']:8.1f} -> {row['div']['fwd_bwd_us']:8.1f} us  "
                  f"ok {row['div1']['ok']}/{row['div']['ok']}  DIV {row['div']['DIV']}", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "triton": __import__("triton").__version__, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
