"""Split-K for GEMMs whose output tiles do not fill one wave of SMs but whose K is long (issue #16: bf16
1000x8192x1000 at 0.64x cuBLAS in graph replay on an H100, 1536x8192x1536 at 0.75x): graph-replay GPU time of the
policy's choice and of K-split tilings, against torch.matmul.

    PYTHONPATH=. python benchmarks/gemm_splitk_probe.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json

import torch
import triton.testing as tt

from rocm_triton_doctor.kernels import gemm

SHAPES = [(1000, 8192, 1000), (1024, 8192, 1024), (1536, 8192, 1536), (512, 8192, 2048), (2048, 8192, 512),
          (768, 4096, 768), (1000, 4096, 1000), (256, 16384, 4096), (4096, 16384, 256)]


def cfg(bm: int, bn: int, warps: int, stages: int, split: int) -> dict[str, int]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": split, "num_warps": warps,
            "num_stages": stages}


CANDS = {f"{bm}x{bn}s{sp}": cfg(bm, bn, 8 if bm * bn >= 128 * 128 else 4, 4, sp)
         for bm, bn in ((128, 256), (128, 128), (64, 128)) for sp in (1, 2, 4, 8)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    out = []
    for M, K, N in SHAPES:
        a = torch.randn((M, K), generator=g, device="cuda").bfloat16()
        b = (torch.randn((K, N), generator=g, device="cuda") * K ** -0.5).bfloat16()
        ref = a.float() @ b.float()
        row: dict[str, object] = {"shape": f"{M}x{K}x{N}", "torch": tt.do_bench_cudagraph(lambda: a @ b, rep=30) * 1e3,
                                  "auto": tt.do_bench_cudagraph(lambda: gemm.gemm(a, b), rep=30) * 1e3}
        for name, c in CANDS.items():
            try:
                err = float((gemm.gemm(a, b, config=c).float() - ref).abs().max() / ref.abs().max())
                row[name] = tt.do_bench_cudagraph(lambda: gemm.gemm(a, b, config=c), rep=30) * 1e3 if err < 2e-2 \
                    else f"wrong {err:.0e}"
            except Exception as exc:  # noqa: BLE001 - a config the compiler refuses is reported
                row[name] = f"error {str(exc)[:30]}"
        out.append(row)
        t = row["torch"]
        best = min((v, k) for k, v in row.items() if isinstance(v, float) and k not in ("torch",))
        print(f"{row['shape']:16} torch {t:7.1f}  auto {row['auto']:7.1f} ({t / row['auto']:.2f})  best {best[1]} "
              f"{best[0]:7.1f} ({t / best[0]:.2f})  " + " ".join(f"{k}={v if isinstance(v, str) else round(t / v, 2)}"
                                                                 for k, v in row.items() if k not in ("shape", "torch", "auto")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
