"""Row kernels on a GPU (issue #16): launch configs for the odd, narrow and wide rows the sweep found slow, and three
ideas for wide (looped) rows tried on a stand-alone RMSNorm: the second pass walking the chunks in reverse (the
chunks read last in pass 1 are the likeliest still in L2), L2 eviction hints (keep pass 1's reads, drop pass 2's),
and a persistent grid small enough that every row in flight fits in L2.

Usage (GPU): python benchmarks/tune_rows.py [--json PATH] [--quick]
Times: triton.testing.do_bench medians with the L2 flushed before each call (as `smoke --preset sweep`), as % of
the copy bandwidth measured in the same run (bytes = read once + written once).
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

from rocm_triton_doctor.kernels import layernorm, policy, rmsnorm, softmax
from rocm_triton_doctor.smoke.timing import measure_ceilings


@triton.jit
def _rms_wide(x_ptr, w_ptr, out_ptr, M, N, eps, BLOCK: tl.constexpr, REV: tl.constexpr, EVICT: tl.constexpr,
              PERSIST: tl.constexpr):
    step = tl.num_programs(0) if PERSIST else 1
    cols = tl.arange(0, BLOCK)
    nblk = tl.cdiv(N, BLOCK)
    for row in range(tl.program_id(0), M if PERSIST else tl.program_id(0) + 1, step):
        base = tl.cast(row, tl.int64) * N
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, nblk):
            c = i * BLOCK + cols
            if EVICT:
                x = tl.load(x_ptr + base + c, mask=c < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
            else:
                x = tl.load(x_ptr + base + c, mask=c < N, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        for i in range(0, nblk):
            j = nblk - 1 - i if REV else i
            c = j * BLOCK + cols
            if EVICT:
                x = tl.load(x_ptr + base + c, mask=c < N, other=0.0, eviction_policy="evict_first").to(tl.float32)
            else:
                x = tl.load(x_ptr + base + c, mask=c < N, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c, mask=c < N, other=0.0).to(tl.float32)
            tl.store(out_ptr + base + c, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=c < N)


def rms_wide(x: torch.Tensor, w: torch.Tensor, block: int, warps: int, rev: bool, evict: bool,
             persist: int = 0) -> torch.Tensor:
    out = torch.empty_like(x)
    M, N = x.shape
    grid = (min(M, persist) if persist else M,)
    _rms_wide[grid](x, w, out, M, N, 1e-6, BLOCK=block, REV=rev, EVICT=evict, PERSIST=bool(persist),
                    num_warps=warps)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-wide", action="store_true", help="skip the wide-row experiments")
    a = ap.parse_args()
    dev = torch.device("cuda")
    ceil = measure_ceilings(dev)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name(0)} copy {ceil.copy_gbps:.0f} GB/s, {sms} SMs, triton {triton.__version__}",
          flush=True)
    t = policy.target_for_device("cuda")
    rows: list[dict[str, Any]] = []
    g = torch.Generator(device=dev).manual_seed(0)

    def record(kernel: str, shape: str, variant: str, fn: Any, nbytes: float, ref: torch.Tensor | None) -> None:
        try:
            y = fn()
            err = float((y.float() - ref.float()).abs().max()) if ref is not None else None
            ms = float(do_bench(fn, warmup=5, rep=30, return_mode="median"))
            pct = nbytes / (ms * 1e-3) / 1e9 / ceil.copy_gbps * 100
            rows.append({"kernel": kernel, "shape": shape, "variant": variant, "us": round(ms * 1e3, 1),
                         "pct_copy": round(pct, 1), "max_err": err})
        except Exception as exc:  # noqa: BLE001 - a tuning run reports a failing variant and goes on
            rows.append({"kernel": kernel, "shape": shape, "variant": variant, "error": str(exc)[:150]})
        print(rows[-1], flush=True)

    from rocm_triton_doctor.kernels import add_mul, swiglu

    with torch.no_grad():
        for n in (1 << 24, (1 << 24) + 7):
            e = [torch.randn(n, device=dev, generator=g).to(torch.float16) for _ in range(3)]
            record("add_mul", f"fp16 n={n}", "policy", functools.partial(add_mul.add_mul, *e), 8.0 * n,
                   (e[0].float() + e[1].float()) * e[2].float())
            record("swiglu", f"fp16 n={n}", "policy", functools.partial(swiglu.swiglu, e[0], e[1]), 6.0 * n,
                   swiglu.swiglu(e[0], e[1]))
    odd = [(1024, 1000), (8192, 1000), (65536, 1000), (8192, 3000), (65536, 3000), (8192, 5120), (8192, 128)]
    if a.quick:
        odd = odd[1:2]
    with torch.no_grad():
        for M, N in odd:
            x = torch.randn(M, N, device=dev, generator=g).to(torch.bfloat16)
            w = torch.randn(N, device=dev, generator=g).to(torch.bfloat16)
            b = torch.randn(N, device=dev, generator=g).to(torch.bfloat16)
            nb = 2.0 * x.numel() * x.element_size()
            base = policy.row_config(t, N, 2, M)
            blk = base["BLOCK"]
            cands = [None] + [{"BLOCK": blk, "ROWS": r, "num_warps": nw} for r, nw in
                              ((1, 2), (1, 4), (1, 8), (2, 4), (2, 8), (4, 8)) if blk * r <= 16384]
            for kname, fn, ref in (("rmsnorm", lambda c: rmsnorm.rmsnorm(x, w, config=c), rmsnorm.rmsnorm(x, w)),
                                   ("layernorm", lambda c: layernorm.layernorm(x, w, b, config=c),
                                    layernorm.layernorm(x, w, b)),
                                   ("softmax", lambda c: softmax.softmax(x, config=c), softmax.softmax(x))):
                for c in cands:
                    label = "policy " + str({k: base[k] for k in ("BLOCK", "ROWS", "num_warps")}) if c is None else str(c)
                    record(kname, f"bf16 {M}x{N}", label, functools.partial(fn, c), nb, ref)
        wide = [] if a.no_wide else [(1024, 65536, torch.bfloat16), (1024, 152064, torch.bfloat16), (1024, 152064, torch.float32),
                (8192, 65536, torch.bfloat16)]
        if a.quick:
            wide = wide[1:2]
        for M, N, dt in wide:
            x = torch.randn(M, N, device=dev, generator=g).to(dt)
            w = torch.randn(N, device=dev, generator=g).to(dt)
            nb = 2.0 * x.numel() * x.element_size()
            ref = rmsnorm.rmsnorm(x, w)
            shape = f"{str(dt)[6:]} {M}x{N}"
            record("rmsnorm", shape, "policy", lambda: rmsnorm.rmsnorm(x, w), nb, ref)
            for blk, nw in ((4096, 8), (8192, 8), (8192, 16)):
                record("rmsnorm", shape, f"looped BLOCK={blk} w{nw}",
                       functools.partial(rmsnorm.rmsnorm, x, w, config={"BLOCK": blk, "ROWS": 1, "num_warps": nw}), nb, ref)
            row_bytes = N * x.element_size()
            fit = max(1, int(0.5 * 50e6 / row_bytes))  # rows whose bytes fill about half of an H100's 50 MB L2
            for rev, evict, persist in ((False, False, 0), (True, False, 0), (False, True, 0), (True, True, 0),
                                        (True, False, min(fit, 4 * sms)), (True, True, min(fit, 4 * sms)),
                                        (True, False, sms), (True, True, sms)):
                for blk, nw in ((8192, 16), (4096, 8)):
                    label = f"wide BLOCK={blk} w{nw} rev={int(rev)} evict={int(evict)} persist={persist}"
                    record("rmsnorm", shape, label,
                           functools.partial(rms_wide, x, w, blk, nw, rev, evict, persist), nb, ref)
            torch.cuda.empty_cache()
    print(f"\n{'kernel':9} {'shape':22} {'us':>8} {'%copy':>6}  variant")
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if "error" in r:
            print(f"{r['kernel']:9} {r['shape']:22} {'ERR':>8} {'':6}  {r['variant']}: {r['error'][:80]}")
            continue
        print(f"{r['kernel']:9} {r['shape']:22} {r['us']:8.1f} {r['pct_copy']:6.1f}  {r['variant']}")
        k = (r["kernel"], r["shape"])
        if k not in best or r["us"] < best[k]["us"]:
            best[k] = r
    print("\nbest per shape:")
    for (k, s), r in best.items():
        print(f"{k:9} {s:22} {r['us']:8.1f} {r['pct_copy']:6.1f}  {r['variant']}")
    if a.json:
        Path(a.json).write_text(json.dumps({"device": torch.cuda.get_device_name(0), "copy_gbps": ceil.copy_gbps,
                                            "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
