"""Why a bf16 GEMM ran slower than fp16 at the same shape in the issue #16 sweep (2048x4096x4096: 151-169 us bf16 vs
97 us fp16, event-timed, H100): GPU time by graph replay (do_bench_cudagraph) and event-timed (do_bench) of our GEMM
(policy config, pointer and TMA kernels) and torch.matmul, fp16 and bf16, at a few shapes.

    PYTHONPATH=. python benchmarks/gemm_dtype_probe.py
"""

from __future__ import annotations

import torch
import triton.testing as tt

from rocm_triton_doctor.kernels import gemm

SHAPES = [(2048, 4096, 4096), (1024, 1024, 1024), (3000, 5120, 3000), (8192, 64, 8192), (4096, 4096, 4096)]


def main() -> None:
    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    for M, K, N in SHAPES:
        for dt in (torch.float16, torch.bfloat16):
            a = torch.randn((M, K), generator=g, device="cuda").to(dt)
            b = (torch.randn((K, N), generator=g, device="cuda") * K ** -0.5).to(dt)
            ref = (a.float() @ b.float())
            for kern in ("auto", "pointer", "tma"):
                try:
                    out = gemm.gemm(a, b, kernel=kern)
                    err = float((out.float() - ref).abs().max() / ref.abs().max())
                    graph = tt.do_bench_cudagraph(lambda: gemm.gemm(a, b, kernel=kern), rep=50) * 1e3
                    ev = tt.do_bench(lambda: gemm.gemm(a, b, kernel=kern), rep=50) * 1e3
                except Exception as exc:  # noqa: BLE001 - a kernel that cannot take the shape is reported
                    rows.append((f"{M}x{K}x{N}", str(dt)[6:], kern, None, None, str(exc)[:60]))
                    continue
                rows.append((f"{M}x{K}x{N}", str(dt)[6:], kern, graph, ev, f"err {err:.1e}"))
            graph = tt.do_bench_cudagraph(lambda: a @ b, rep=50) * 1e3
            ev = tt.do_bench(lambda: a @ b, rep=50) * 1e3
            rows.append((f"{M}x{K}x{N}", str(dt)[6:], "torch", graph, ev, ""))
    print(f"{'shape':18} {'dtype':9} {'kernel':8} {'graph us':>9} {'event us':>9}  note")
    for s, d, k, gr, ev, note in rows:
        print(f"{s:18} {d:9} {k:8} {gr if gr is None else round(gr, 1)!s:>9} {ev if ev is None else round(ev, 1)!s:>9}  {note}")


if __name__ == "__main__":
    main()
