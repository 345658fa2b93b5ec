"""The model shapes the launchers take beyond their base layout, on a GPU against torch: attention in SDPA's 3-D and
5-D shapes, gemm on (B, S, K) activations, linear cross-entropy on (B, S, H) hidden states, and the row and
elementwise kernels on the (B, S, H, D) model layout; softmax over another dim, norms over two trailing dims and
add_mul broadcasting (session 23's last additions, not yet run on a GPU). Prints one JSON line: each check's max
relative error.

    PYTHONPATH=. python benchmarks/shapes_check.py
"""

from __future__ import annotations

import json

import torch
import torch.nn.functional as F

from rocm_triton_doctor.kernels import add_mul, attention, gemm, layernorm, linear_cross_entropy, rmsnorm, softmax


def rel(y: torch.Tensor, ref: torch.Tensor) -> float:
    return float((y.float() - ref.float()).abs().max() / (ref.float().abs().max() + 1e-6))


def main() -> None:
    g = torch.Generator(device="cuda").manual_seed(0)
    bf = torch.bfloat16
    out: dict[str, float] = {}
    q3 = torch.randn(32, 300, 64, device="cuda", generator=g, dtype=bf)
    k3 = torch.randn(8, 300, 64, device="cuda", generator=g, dtype=bf)
    out["attention (H, S, D) GQA causal"] = rel(attention.attention(q3, k3, k3, True),
                                                F.scaled_dot_product_attention(q3, k3, k3, is_causal=True, enable_gqa=True))
    q5 = torch.randn(2, 3, 8, 257, 128, device="cuda", generator=g, dtype=bf)
    k5 = torch.randn(2, 3, 8, 513, 128, device="cuda", generator=g, dtype=bf)
    out["attention (A, B, H, S, D)"] = rel(attention.attention(q5, k5, k5), F.scaled_dot_product_attention(q5, k5, k5))
    act = torch.randn(4, 77, 1024, device="cuda", generator=g, dtype=bf)
    w = torch.randn(3000, 1024, device="cuda", generator=g, dtype=bf)
    out["gemm (B, S, K) activations"] = rel(gemm.gemm(act, w.t()), F.linear(act.float(), w.float()))
    h = torch.randn(2, 333, 512, device="cuda", generator=g)
    wv = torch.randn(5000, 512, device="cuda", generator=g) * 0.05
    t = torch.randint(0, 5000, (2, 333), device="cuda", generator=g)
    out["linear_cross_entropy (B, S, H)"] = rel(linear_cross_entropy.linear_cross_entropy(h, wv, t),
                                                F.cross_entropy(F.linear(h, wv).reshape(-1, 5000), t.reshape(-1)))
    x = torch.randn(2, 16, 300, 128, device="cuda", generator=g, dtype=bf).transpose(1, 2)  # (B, S, H, D)
    wn = torch.randn(128, device="cuda", generator=g)
    xf = x.float()
    out["rmsnorm (B, S, H, D) view"] = rel(rmsnorm.rmsnorm(x, wn), xf * torch.rsqrt(xf.square().mean(-1, keepdim=True)
                                                                                     + 1e-6) * wn)
    out["layernorm (B, S, H, D) view"] = rel(layernorm.layernorm(x, wn, wn), F.layer_norm(xf, (128,), wn, wn, 1e-5))
    out["softmax (B, S, H, D) view"] = rel(softmax.softmax(x), torch.softmax(xf, -1))
    out["softmax dim=1"] = rel(softmax.softmax(x, dim=1), torch.softmax(xf, 1))
    w2, b2 = torch.randn(16, 128, device="cuda", generator=g), torch.randn(16, 128, device="cuda", generator=g)
    xc = x.contiguous()
    out["layernorm over (H, D)"] = rel(layernorm.layernorm(xc, w2, b2), F.layer_norm(xc.float(), (16, 128), w2, b2))
    out["rmsnorm over (H, D)"] = rel(rmsnorm.rmsnorm(xc, w2), F.rms_norm(xc.float(), (16, 128), w2, 1e-6))
    scale = torch.randn(128, device="cuda", generator=g, dtype=bf)
    out["add_mul broadcast"] = rel(add_mul.add_mul(x, scale, scale[None, None, None]),
                                   (xf + scale.float()) * scale.float())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
