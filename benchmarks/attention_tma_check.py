"""attention(kernel="tma") (host descriptors, Hopper) on S_q = S_k, S_q != S_k and GQA shapes against SDPA, printing
a failure's whole chain of causes: how session 10 found that a helper's default DOT_PREC string broke this kernel on
Triton 3.6 ("'str' object has no attribute 'type'"). Usage (GPU): PYTHONPATH=. python benchmarks/attention_tma_check.py"""

import torch

from rocm_triton_doctor.kernels import attention

for (B, H, Hkv, S, Sk, D, causal) in ((4, 32, 8, 4096, 256, 128, False), (2, 16, 16, 3416, 205, 64, False),
                                       (4, 32, 8, 4096, 4096, 128, False), (4, 32, 8, 1024, 256, 128, False),
                                       (4, 32, 8, 256, 4096, 128, False), (4, 32, 32, 4096, 1024, 128, True)):
    q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    try:
        o = attention.attention(q, k, v, causal, kernel="tma")
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hkv != H)
        print((B, H, Hkv, S, Sk, D, causal), "ok", float((o.float() - ref.float()).abs().max()))
    except Exception as exc:  # noqa: BLE001
        print((B, H, Hkv, S, Sk, D, causal), "FAILED", type(exc).__name__)
        lines = str(exc).splitlines()
        print("\n".join(lines[-25:]))
        cause = exc.__cause__ or exc.__context__
        while cause is not None:
            print("CAUSE:", type(cause).__name__, "\n".join(str(cause).splitlines()[-12:]))
            cause = cause.__cause__ or cause.__context__

