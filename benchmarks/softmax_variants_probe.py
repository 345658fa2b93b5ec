"""Why our single-block softmax trails Liger's at widths well short of a power of two (issue #16, H100, graph replay:
bf16 1024x11008 79.9 % of copy against 96.2 %): stand-alone variants of the one-block row softmax, timed by graph
replay against ours and Liger's, as % of the copy bandwidth measured in the same run.

    PYTHONPATH=. python benchmarks/softmax_variants_probe.py
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
import triton.testing as tt

from rocm_triton_doctor.kernels import policy, softmax


@triton.jit
def _sm_1d(x_ptr, out_ptr, N, BLOCK: tl.constexpr, RECIP: tl.constexpr, EXP2: tl.constexpr, CS: tl.constexpr = False):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=m, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp2(x * 1.4426950408889634) if EXP2 else tl.exp(x)
    s = tl.sum(e, axis=0)
    y = e * (1.0 / s) if RECIP else e / s
    if CS:  # streaming store (Liger's `.cs`): the output does not evict the input from L2
        tl.store(out_ptr + row * N + cols, y.to(out_ptr.dtype.element_ty), mask=m, cache_modifier=".cs")
    else:
        tl.store(out_ptr + row * N + cols, y.to(out_ptr.dtype.element_ty), mask=m)


def main() -> None:
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except ImportError:
        LigerSoftmaxFunction = None
    dev = torch.device("cuda")
    big = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    gbps = 2 * big.numel() / (tt.do_bench_cudagraph(lambda: big.clone(), rep=40) * 1e3) / 1e3
    target = policy.target_for_device("cuda")
    for M, N in ((1024, 11008), (8192, 11008), (1024, 16384), (1024, 32000), (8192, 5000), (4096, 3000)):
        x = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
        o = torch.empty_like(x)
        ref = torch.softmax(x.float(), -1)
        cfg = policy.row_config(target, N, 2, M)
        if cfg["BLOCK"] < N:
            print(f"{M}x{N}: looped ({cfg}); skipped")
            continue
        moved = 2 * x.numel() * 2

        def pct(fn) -> float:
            return round(100 * moved / (tt.do_bench_cudagraph(fn, rep=40) * 1e3) / 1e3 / gbps, 1)

        row = {"ours": pct(lambda: softmax.softmax(x))}
        for recip in (False, True):
            for exp2 in (False, True):
                def run(recip=recip, exp2=exp2) -> None:
                    _sm_1d[(M,)](x, o, N, BLOCK=cfg["BLOCK"], RECIP=recip, EXP2=exp2, num_warps=cfg["num_warps"])
                run()
                err = float((o.float() - ref).abs().max())
                row[f"1d{' recip' if recip else ''}{' exp2' if exp2 else ''}"] = pct(run) if err < 1e-2 else f"wrong {err}"
        def run_cs() -> None:
            _sm_1d[(M,)](x, o, N, BLOCK=cfg["BLOCK"], RECIP=True, EXP2=True, CS=True, num_warps=cfg["num_warps"])
        row["1d recip exp2 .cs"] = pct(run_cs)
        if LigerSoftmaxFunction is not None:
            row["liger"] = pct(lambda: LigerSoftmaxFunction.apply(x))
        print(f"{M}x{N} BLOCK {cfg['BLOCK']} w{cfg['num_warps']}: {row}")
    print(f"copy {gbps:.0f} GB/s; % of copy, graph replay")


if __name__ == "__main__":
    main()
