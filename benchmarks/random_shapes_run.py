"""Random SDPA shapes through attention (3-6 dims, GQA over dim -3, causal or not, S_q != S_k, model-layout views)
and its autograd op, and linear cross-entropy over (..., H) hidden states (every reduction, its gradients, both
forms), against torch. CPU, the interpreter.

    python benchmarks/random_shapes_run.py SECONDS SEED
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

from rocm_triton_doctor.kernels import attention, linear_cross_entropy as lce  # noqa: E402

TOL = {torch.float32: 8e-4, torch.bfloat16: 0.12, torch.float16: 0.02}


def attention_case(r: random.Random, counts: dict[str, int], wrong: list[Any]) -> None:
    nd = r.randint(3, 6)
    lead = [r.randint(1, 3) for _ in range(nd - 3)]
    hkv = r.randint(1, 3)
    hq = hkv * r.randint(1, 3)
    sq, sk, d = r.randint(1, 40), r.randint(1, 40), r.choice([8, 16, 24, 32, 40, 64])
    dt = r.choice(list(TOL))
    g = torch.Generator().manual_seed(r.randint(0, 2**30))
    q = torch.randn(*lead, hq, sq, d, generator=g).to(dt)
    k, v = (torch.randn(*lead, hkv, sk, d, generator=g).to(dt) for _ in range(2))
    if r.random() < 0.4 and nd >= 4:  # the model layout: (..., S, H, D) transposed to (..., H, S, D)
        q = q.transpose(-3, -2).contiguous().transpose(-3, -2)
    causal = r.random() < 0.5
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=True)
    got = attention.attention(q, k, v, causal)
    err = (got.float() - ref).abs().max().item() if ref.numel() else 0.0
    if got.shape != q.shape or not err <= TOL[dt]:
        wrong.append(("attention", tuple(q.shape), tuple(k.shape), dt, causal, err))
    counts["attention"] = counts.get("attention", 0) + 1
    if dt == torch.float32 and r.random() < 0.3:
        qa, ka, va = (t.clone().requires_grad_() for t in (q, k, v))
        attention.autograd_op(qa, ka, va, causal).square().sum().backward()
        qr, kr, vr = (t.double().requires_grad_() for t in (q, k, v))
        F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal, enable_gqa=True).square().sum().backward()
        # relative to the largest reference gradient of the three: one of them is exactly 0 where every query sees one
        # key (S_k = 1, or causal S_q = 1), and fp32 rounding leaves ~1e-6 there
        pairs = ((qa, qr), (ka, kr), (va, vr))
        scale = max(b.grad.abs().max().item() for _, b in pairs) + 1e-6  # type: ignore[union-attr]
        e = max((a.grad.double() - b.grad).abs().max().item() / scale for a, b in pairs)  # type: ignore[union-attr]
        if not e <= 1e-3:
            wrong.append(("attention grad", tuple(q.shape), tuple(k.shape), causal, e))
        counts["attention grad"] = counts.get("attention grad", 0) + 1


def lce_case(r: random.Random, counts: dict[str, int], wrong: list[Any]) -> None:
    """One random (..., H) call, reduction mean, sum or none (session 24), with a bias half the time and a random
    weight on each token's loss for "none"; the loss and the gradients of h, W and the bias against fp64 torch."""
    g = torch.Generator().manual_seed(r.randint(0, 2**30))
    lead = [r.randint(1, 4) for _ in range(r.randint(0, 3))]
    h_dim, v_dim = r.randint(1, 48), r.randint(2, 70)
    h = torch.randn(*lead, r.randint(1, 6), h_dim, generator=g, dtype=torch.float64).float().requires_grad_()
    w = (torch.randn(v_dim, h_dim, generator=g) * 0.3).requires_grad_()
    b = (torch.randn(v_dim, generator=g) * 0.1).requires_grad_() if r.random() < 0.5 else None
    t = torch.randint(0, v_dim, h.shape[:-1], generator=g)
    if t.numel() > 1 and r.random() < 0.3:
        t.view(-1)[0] = -100
    red = r.choice(["mean", "sum", "none"])
    call = lce.linear_cross_entropy if r.random() < 0.7 else lce.linear_cross_entropy_custom_op
    loss = call(h, w, t, b, reduction=red)
    weight = torch.rand(t.shape, generator=g, dtype=torch.float64)
    if red == "none":
        (loss.double() * weight).sum().backward()
    else:
        loss.backward()
    leaves = [x for x in (h, w, b) if x is not None]
    ours = [x.grad for x in leaves]
    ref_leaves = [x.detach().double().requires_grad_() for x in leaves]
    hd, wd = ref_leaves[0], ref_leaves[1]
    bd = ref_leaves[2] if b is not None else None
    ref = F.cross_entropy(F.linear(hd, wd, bd).reshape(-1, v_dim), t.reshape(-1), reduction=red)
    ref = ref.reshape(t.shape) if red == "none" else ref
    ((ref * weight).sum() if red == "none" else ref).backward()
    scale = max(1.0, float(ref.detach().abs().max()))
    if loss.shape != ref.shape or float((loss.detach().double() - ref.detach()).abs().max()) > 1e-4 * scale:
        wrong.append(("lce loss", tuple(h.shape), v_dim, red, tuple(loss.shape)))
    for name, got, want in zip(("h", "W", "bias"), ours, (x.grad for x in ref_leaves)):
        top = max(float(x.grad.abs().max()) for x in ref_leaves)  # the largest of the call's gradients (as attention)
        if got is None or float((got.double() - want).abs().max()) > 1e-4 * max(top, 1e-3):
            wrong.append(("lce grad " + name, tuple(h.shape), v_dim, red, b is not None))
    counts["lce " + red] = counts.get("lce " + red, 0) + 1


def main() -> None:
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    counts: dict[str, int] = {}
    wrong: list[Any] = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        for case in (attention_case, lce_case):
            try:
                case(r, counts, wrong)
            except ValueError as exc:
                wrong.append((case.__name__, f"refused: {str(exc)[:160]}"))
    print("cases", counts, "wrong", len(wrong))
    for w in wrong[:20]:
        print("  ", w)


if __name__ == "__main__":
    main()
