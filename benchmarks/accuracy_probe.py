"""Who is wrong when a GPU check fails? For the cases `smoke --preset random` flagged on an H100 (fp32 attention,
bf16 linear + cross-entropy), every candidate against an fp64 computation of the same math on the GPU: ours (the
default, and fp32 attention with tl.dot forced to TF32 / IEEE / the 3xTF32 split), torch eager, and the fp32
reference the smoke check uses. Each error is the worst ratio |x - ref64| / (atol + rtol·|ref64|) with the dtype's
tolerance (kernels/tolerances.py): over 1 fails the check.

    PYTHONPATH=. python benchmarks/accuracy_probe.py --json acc.json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
import torch.nn.functional as F

from rocm_triton_doctor.kernels import attention, linear_cross_entropy, policy
from rocm_triton_doctor.kernels.tolerances import tolerance

ATTN = [(8, 1, 4727, 64, True, 1, 4521, False), (16, 12, 5, 64, True, 2, 5, False), (8, 12, 2, 32, False, 1, 3993, True),
        (2, 8, 1000, 128, False, 8, 1000, False), (2, 8, 1000, 80, True, 2, 1000, True)]
LCE = [(172, 4096, 9), (3485, 1024, 118), (3770, 1024, 1566), (1024, 512, 1000)]


def ratio(x: torch.Tensor, ref: torch.Tensor, dtype_name: str) -> float:
    tol = tolerance(dtype_name)
    r = (x.double() - ref).abs() / (tol.atol + tol.rtol * ref.abs())
    return float(r.nan_to_num(float("inf")).max())


def attention_rows(dev: torch.device) -> list[dict[str, Any]]:
    rows = []
    for B, H, S, D, causal, hk, sk, bshd in ATTN:
        case = attention.make_case(B, H, S, D, torch.float32, causal, H_kv=hk, S_k=sk, model_layout=bshd)
        x = case.setup(dev, torch.Generator(device=dev).manual_seed(0))
        q, k, v = x["q"], x["k"], x["v"]
        mask = torch.ones(S, sk, dtype=torch.bool, device=dev).tril() if causal else None
        ref64 = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask, enable_gqa=True)
        row: dict[str, Any] = {"case": case.name}
        row["smoke reference (fp32 SDPA)"] = ratio(case.reference(x), ref64, "float32")
        row["eager"] = ratio(case.eager(x), ref64, "float32") if case.eager else None
        row["ours default"] = ratio(case.run(x, None), ref64, "float32")
        saved = policy.fp32_dot_precision
        for prec in ("tf32", "ieee", "tf32x3"):
            attention.clear_plans()
            attention.policy.fp32_dot_precision = lambda t, p=prec: p  # type: ignore[assignment]
            try:
                row[f"ours {prec}"] = ratio(case.run(x, None), ref64, "float32")
            except Exception as e:  # noqa: BLE001
                row[f"ours {prec}"] = f"{type(e).__name__}: {e}"[:200]
            finally:
                attention.policy.fp32_dot_precision = saved  # type: ignore[assignment]
                attention.clear_plans()
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def lce_rows(dev: torch.device) -> list[dict[str, Any]]:
    rows = []
    for N, H, V in LCE:
        case = linear_cross_entropy.make_case(N, H, V, torch.bfloat16)
        x = case.setup(dev, torch.Generator(device=dev).manual_seed(0))
        h64, w64 = x["h"].double().requires_grad_(), x["w"].double().requires_grad_()
        loss = F.cross_entropy(h64 @ w64.t(), x["y"], reduction="sum")
        loss.backward()
        assert h64.grad is not None and w64.grad is not None
        ref64 = torch.cat([loss.detach().reshape(1), h64.grad.flatten(), w64.grad.flatten()])
        row: dict[str, Any] = {"case": case.name}
        for name, out in (("smoke reference (fp32)", case.reference(x)), ("eager bf16", case.eager(x) if case.eager else None),
                          ("ours", case.run(x, None))):
            if out is None:
                continue
            r = (out.double() - ref64).abs() / (2e-2 + 2e-2 * ref64.abs())
            nh = 1 + N * H
            row[name] = {"loss": float(r[:1].max()), "dh": float(r[1:nh].max()), "dW": float(r[nh:].max()),
                         "n_over_1": int((r > 1).sum())}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "attention_fp32": attention_rows(dev),
           "lce_bf16": lce_rows(dev)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
