"""Narrow rows (N <= 256) in the row kernels: the policy's packing (several rows per program) against other ROWS and
warp counts, for widths whose rows are 16-byte aligned and widths that are not (softmax bf16 266079x37 ran at 13 % of
copy bandwidth, 0.35x eager, in benchmarks/shape_hunt.py seed 1, while RMSNorm 95537x42 ran at 48 %). GPU time by
CUDA-graph replay, % of the copy bandwidth measured in the same run, every output checked against the reference.

    PYTHONPATH=. python benchmarks/narrow_rows_probe.py --json narrow.json
    PYTHONPATH=. python benchmarks/narrow_rows_probe.py --policy-only --compile --widths 2,4 --json c.json  (session 18)
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import layernorm, rmsnorm, rows, softmax
from rocm_triton_doctor.smoke import timing


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--mib", type=float, default=64, help="MiB of x per row set (fractions: small grids)")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    ap.add_argument("--rows", default="8,32,64,128", help="ROWS values tried (with 1, 2, 4 and 8 warps)")
    ap.add_argument("--warps", default="1,2,4,8")
    ap.add_argument("--widths", default="2,23,37,42,64,100,128,200")
    ap.add_argument("--kernels", default="softmax,rmsnorm", help="any of softmax, rmsnorm, layernorm")
    ap.add_argument("--policy-only", action="store_true", help="time only the policy's config (and eager)")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile of the eager op (a baseline)")
    args = ap.parse_args()
    dev = torch.device("cuda")
    copy = timing.measure_ceilings(dev).copy_gbps
    out_rows = []
    dt = getattr(torch, args.dtype)
    esize = torch.empty((), dtype=dt).element_size()
    for name in args.kernels.split(","):
        for N in [int(v) for v in args.widths.split(",")]:
            M = max(1, int(args.mib * (1 << 20)) // (esize * N))
            x = torch.randn(M, N, device=dev, dtype=dt)
            w = torch.randn(N, device=dev, dtype=dt)
            b = torch.randn(N, device=dev, dtype=dt)
            run, eager, ref = {
                "softmax": (lambda c: softmax.softmax(x, config=c), lambda: torch.softmax(x, -1),
                            lambda: torch.softmax(x.double(), -1)),
                "rmsnorm": (lambda c: rmsnorm.rmsnorm(x, w, config=c), lambda: rmsnorm.eager(x, w),
                            lambda: rmsnorm.reference(x, w)),
                "layernorm": (lambda c: layernorm.layernorm(x, w, b, config=c),
                              lambda: torch.nn.functional.layer_norm(x, (N,), w, b),
                              lambda: torch.nn.functional.layer_norm(x.double(), (N,), w.double(), b.double())),
            }[name]
            ref = ref()
            pol = rows._config(rows.target_of(x), N, esize, M)  # the grid this M makes (narrow rows key on it)
            cfgs = [None] + [{"BLOCK": pol["BLOCK"], "ROWS": r, "num_warps": wp}
                             for r in (int(v) for v in args.rows.split(",")) for wp in (int(v) for v in args.warps.split(","))
                             if r * pol["BLOCK"] <= 16384 and r <= M][: 0 if args.policy_only else None]
            t_e = float(do_bench_cudagraph(eager, rep=20))
            t_c = None
            if args.compile:
                compiled = torch.compile(eager, dynamic=False)
                compiled()
                t_c = float(do_bench_cudagraph(compiled, rep=20))
            res = []
            for c in cfgs:
                try:
                    err = float((run(c).float() - ref.float()).abs().max())
                    t = float(do_bench_cudagraph(lambda c=c: run(c), rep=20))
                except Exception as exc:  # noqa: BLE001 - a config that does not compile is a row, not a stop
                    res.append({"config": c, "error": str(exc)[:100]})
                    continue
                res.append({"config": c or dict(pol), "policy": c is None, "ms": t, "err": err,
                            "pct_copy": 100 * 2 * esize * M * N / (t * 1e-3) / (copy * 1e9), "x_eager": t_e / t})
            ok = [r for r in res if "ms" in r]
            best = min(ok, key=lambda r: r["ms"])
            polr = ok[0]
            print(f"{name} {args.dtype} {M}x{N}: eager {t_e * 1e3:.1f} us; policy ROWS={polr['config']['ROWS']} "
                  f"w{polr['config']['num_warps']} {polr['pct_copy']:.1f}% ({polr['x_eager']:.2f}x eager, err "
                  f"{polr['err']:.1e}); best ROWS={best['config']['ROWS']} w{best['config']['num_warps']} "
                  f"{best['pct_copy']:.1f}% ({best['x_eager']:.2f}x)"
                  + (f"; torch.compile {t_c * 1e3:.1f} us, policy {t_c / polr['ms']:.2f}x it" if t_c else ""), flush=True)
            out_rows.append({"kernel": name, "dtype": args.dtype, "M": M, "N": N, "eager_ms": t_e, "compile_ms": t_c,
                             "results": res})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "copy_gbps": copy, "rows": out_rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
