"""Configuration sweep on a GPU for the kernels issue #5 is about: one run, one table, JSON kept.

Usage: python benchmarks/tune.py [--quick] [--json FILE]
GEMM family (fp16/bf16, 4096^3 and 8192^3; plain, +bias+ReLU, +bias+ReLU+dropout) against eager torch, the
bias+GELU+dropout+residual kernel (16x2048x8192) against the copy ceiling and eager, and attention (bf16, B4 H32
S4096 D128) against scaled_dot_product_attention — each over a few launch configurations, with the device's copy
bandwidth and matmul rate measured in the same run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import json
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import attention, bias_gelu_dropout_residual, gemm
from rocm_triton_doctor.kernels.base import dropout_args
from rocm_triton_doctor.smoke.timing import measure_ceilings


def ms(fn) -> float:  # type: ignore[no-untyped-def]
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--parts", default="gemm,bias_gelu_dropout_residual,attention",
                    help="comma list of gemm, bias_gelu_dropout_residual, attention, gemm_small, rows, rows2, tma, "
                         "attn_tma, gemm_decode, gemm_odd, attn_shapes")
    a = ap.parse_args()
    dev = torch.device("cuda")
    ceil = measure_ceilings(dev)
    rows = []
    print(f"device {torch.cuda.get_device_name(0)}; copy {ceil.copy_gbps:.0f} GB/s; matmul {ceil.matmul_tflops}", flush=True)

    gemm_cfgs = [
        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    ]
    sizes = (4096,) if a.quick else (4096, 8192)
    parts = set(a.parts.split(","))
    for dtype in ((torch.float16, torch.bfloat16) if "gemm" in parts else ()):
        for n in sizes:
            A = torch.randn(n, n, device=dev, dtype=dtype)
            B = torch.randn(n, n, device=dev, dtype=dtype) / n**0.5
            bias = torch.randn(n, device=dev, dtype=dtype)
            fl = 2 * n**3
            eager = {
                "none": ms(lambda: A @ B),
                "bias_relu": ms(lambda: torch.relu(A @ B + bias)),
                "bias_relu+dropout": ms(lambda: torch.nn.functional.dropout(torch.relu(A @ B + bias), 0.1, True)),
            }
            for epi, p in (("none", 0.0), ("bias_relu", 0.0), ("bias_relu+dropout", 0.1)):
                kind = "bias_relu" if epi != "none" else "none"
                for cfg in gemm_cfgs:
                    try:
                        t = ms(lambda cfg=cfg: gemm.gemm(A, B, bias if kind != "none" else None, kind, p=p, seed=1,
                                                         config=cfg))
                    except Exception as exc:  # noqa: BLE001
                        print("  fail", epi, cfg, str(exc).splitlines()[0][:120], flush=True)
                        continue
                    row = {"kernel": "gemm", "dtype": str(dtype)[6:], "n": n, "epilogue": epi, "config": cfg,
                           "ms": t, "tflops": fl / t / 1e9, "eager_ms": eager[epi], "x_eager": eager[epi] / t,
                           "pct_matmul": 100 * fl / t / 1e9 / ceil.matmul_tflops[str(dtype)[6:]]}
                    rows.append(row)
                    print(f"gemm {row['dtype']} {n} {epi:18s} {cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} "
                          f"w{cfg['num_warps']} s{cfg['num_stages']}: {row['tflops']:6.0f} TF/s  x eager "
                          f"{row['x_eager']:.2f}  {row['pct_matmul']:.0f}% of matmul", flush=True)


    fused_cfgs = [{"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w} for bm, bn, w in
                 ((4, 1024, 4), (8, 1024, 8), (16, 512, 8), (2, 2048, 8), (32, 256, 8), (8, 512, 4))]
    B_, S_, H_ = (16, 2048, 8192)
    for dtype in ((torch.float16, torch.bfloat16, torch.float32) if "bias_gelu_dropout_residual" in parts else ()):
        x = torch.randn(B_, S_, H_, device=dev, dtype=dtype)
        r = torch.randn_like(x)
        b = torch.randn(H_, device=dev, dtype=dtype)
        nbytes = (3 * x.numel() + H_) * x.element_size()
        te = ms(lambda: r + torch.nn.functional.dropout(torch.nn.functional.gelu(x + b, approximate="tanh"), 0.1, True))
        for cfg in fused_cfgs:
            grid = (triton_cdiv(B_ * S_, cfg["BLOCK_M"]), triton_cdiv(H_, cfg["BLOCK_N"]))
            o = torch.empty_like(x)
            thr, sc = dropout_args(0.1)

            def run(cfg=cfg, grid=grid, o=o, thr=thr, sc=sc):  # type: ignore[no-untyped-def]
                bias_gelu_dropout_residual.bias_gelu_dropout_residual_kernel[grid](
                    x, b, r, o, B_ * S_, H_, 1, 1, H_, 0, 0, 1, H_, 0, 0, 1, 1, 7, thr, sc, HAS_DROPOUT=True,
                    FAST_TANH=x.element_size() == 2, **cfg)

            t = ms(run)
            gbps = nbytes / t / 1e6
            row = {"kernel": "bias_gelu_dropout_residual", "dtype": str(dtype)[6:], "config": cfg, "ms": t, "gbps": gbps,
                   "pct_copy": 100 * gbps / ceil.copy_gbps, "eager_ms": te, "x_eager": te / t}
            rows.append(row)
            print(f"bias_gelu_dropout_residual {row['dtype']:8s} {cfg}: {gbps:7.0f} GB/s {row['pct_copy']:5.1f}% of copy  "
                  f"x eager {row['x_eager']:.2f}", flush=True)


    att_cfgs = [{"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": s} for bm, bn, w, s in
                ((128, 64, 8, 3), (128, 64, 8, 4), (128, 128, 8, 3), (128, 128, 8, 4), (64, 64, 4, 3), (64, 64, 4, 4),
                 (64, 128, 4, 3), (128, 32, 8, 3))]
    q, k, v = (torch.randn(4, 32, 4096, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
    for causal in ((False, True) if "attention" in parts else ()):
        ts = ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
        fl = 4 * 4 * 32 * 4096 * 4096 * 128 * (0.5 if causal else 1.0)
        for cfg in att_cfgs:
            o = torch.empty_like(q)

            def run(cfg=cfg, o=o):  # type: ignore[no-untyped-def]
                attention.attention(q, k, v, causal, out=o, kernel="pointer", config=cfg)

            try:
                t = ms(run)
            except Exception as exc:  # noqa: BLE001
                print("  attention fail", cfg, str(exc).splitlines()[0][:120], flush=True)
                continue
            row = {"kernel": "attention", "causal": causal, "config": cfg, "ms": t, "tflops": fl / t / 1e9,
                   "sdpa_ms": ts, "x_sdpa": ts / t}
            rows.append(row)
            print(f"attn causal={causal!s:5s} {cfg}: {row['tflops']:5.0f} TF/s  x SDPA {row['x_sdpa']:.2f}", flush=True)
    from tune_shapes import SWEEPS as SHAPE_SWEEPS  # benchmarks/tune_shapes.py: issue #16's shape classes

    sweeps = {"gemm_small": tune_gemm_small, "rows": tune_rows,
              "rows2": tune_rows_looped, "tma": tune_tma_gemm, "attn_tma": tune_attention_tma, **SHAPE_SWEEPS}
    for name, sweep in sweeps.items():
        if name in parts:
            sweep(dev, ceil, rows)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "ceilings": ceil.to_dict(), "rows": rows}, fh, indent=1)


def tune_gemm_small(dev, ceil, rows) -> None:  # type: ignore[no-untyped-def]
    """The seed/quick GEMM shapes (1024^3, 2048^3): few 128x256 tiles leave most SMs idle (32 tiles at 1024^2)."""
    cfgs = [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s}
            for bm, bn, bk, w, s in ((128, 256, 64, 8, 4), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4), (64, 128, 64, 4, 4),
                                     (128, 64, 64, 4, 4), (64, 64, 64, 4, 4), (128, 128, 32, 4, 4), (64, 128, 32, 4, 5))]
    for n in (1024, 2048):
        A = torch.randn(n, n, device=dev, dtype=torch.float16)
        B = torch.randn(n, n, device=dev, dtype=torch.float16) / n**0.5
        bias = torch.randn(n, device=dev, dtype=torch.float16)
        fns = {"none": lambda: A @ B, "bias_relu": lambda: torch.relu(A @ B + bias),
               "bias_relu+dropout": lambda: torch.nn.functional.dropout(torch.relu(A @ B + bias), 0.1, True)}
        eager = {k: float(do_bench_cudagraph(f, rep=50, return_mode="median")) for k, f in fns.items()}
        for epi, p in (("none", 0.0), ("bias_relu", 0.0), ("bias_relu+dropout", 0.1)):
            for cfg in cfgs:
                kind = "bias_relu" if epi != "none" else "none"
                # Graph replay: at these sizes a Python launch costs as much as the kernel (launch-bound).
                t = float(do_bench_cudagraph(lambda cfg=cfg: gemm.gemm(A, B, bias if kind != "none" else None, kind, p=p,
                                                                       seed=1, config=cfg), rep=50, return_mode="median"))
                row = {"kernel": "gemm_small", "dtype": "float16", "n": n, "epilogue": epi, "config": cfg, "ms": t,
                       "tflops": 2 * n**3 / t / 1e9, "eager_ms": eager[epi], "x_eager": eager[epi] / t}
                rows.append(row)
                print(f"gemm_small {n} {epi:18s} {cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} w{cfg['num_warps']} "
                      f"s{cfg['num_stages']}: {t * 1e3:7.1f} us  x eager {row['x_eager']:.2f}", flush=True)


@triton.jit
def _rms_rows(x_ptr, w_ptr, o_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr, EVICT: tl.constexpr):
    rws = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rws < M)[:, None] & (cols < N)[None, :]
    offs = rws.to(tl.int64)[:, None] * N + cols[None, :]
    if EVICT:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
    else:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    tl.store(o_ptr + offs, (x * rstd[:, None] * w[None, :]).to(o_ptr.dtype.element_ty), mask=mask)


def _norm_setup(dev, dtype, M: int, N: int):  # type: ignore[no-untyped-def]
    """Inputs for the norm sweeps, their byte count, and torch.compile's RMSNorm time on them."""
    from rocm_triton_doctor.kernels import rmsnorm

    x = torch.randn(M, N, device=dev, dtype=dtype)
    w = torch.randn(N, device=dev, dtype=dtype)
    b = torch.randn(N, device=dev, dtype=dtype)
    comp = torch.compile(rmsnorm.eager)
    comp(x, w)
    return x, w, b, torch.empty_like(x), (2 * M * N + N) * x.element_size(), ms(lambda: comp(x, w))


def tune_rows(dev, ceil, rows) -> None:  # type: ignore[no-untyped-def]
    """RMSNorm/LayerNorm (65536x8192) and add-mul against torch.compile: warps, rows per program, eviction hints."""
    import glob
    import os

    from rocm_triton_doctor.kernels import add_mul, layernorm, rmsnorm

    M, N = 65536, 8192
    for dtype in (torch.float32, torch.bfloat16):
        x, w, b, o, nbytes, tc = _norm_setup(dev, dtype, M, N)
        tp = ms(lambda: rmsnorm.rmsnorm(x, w, out=o))
        print(f"rms {str(dtype)[6:]}: compile {nbytes / tc / 1e6:.0f} GB/s, production {nbytes / tp / 1e6:.0f} GB/s "
              f"(x compile {tc / tp:.3f})", flush=True)
        rows.append({"kernel": "rmsnorm", "dtype": str(dtype)[6:], "variant": "production", "ms": tp, "compile_ms": tc})
        for r_, wp, ev in ((1, 4, False), (1, 8, False), (1, 16, False), (1, 32, False), (2, 16, False), (4, 16, False),
                           (2, 8, False), (1, 8, True), (1, 16, True), (2, 16, True)):
            t = ms(lambda r_=r_, wp=wp, ev=ev: _rms_rows[(M // r_,)](x, w, o, M, N, 1e-6, ROWS=r_, BLOCK=N, EVICT=ev,
                                                                     num_warps=wp))
            rows.append({"kernel": "rmsnorm", "dtype": str(dtype)[6:], "variant": {"rows": r_, "warps": wp, "evict": ev},
                         "ms": t, "compile_ms": tc, "gbps": nbytes / t / 1e6})
            print(f"  rms rows={r_} warps={wp:2d} evict={ev!s:5s}: {nbytes / t / 1e6:6.0f} GB/s  x compile {tc / t:.3f}",
                  flush=True)
        lcomp = torch.compile(lambda x, w, b: torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5))
        lcomp(x, w, b)
        tlc = ms(lambda: lcomp(x, w, b))
        for wp in (4, 8, 16, 32):
            t = ms(lambda wp=wp: layernorm.layernorm_kernel[(M,)](x, w, b, o, M, N, 1, 1, N, 0, 0, 1, 1, 1, 1e-5, BLOCK=N, ROWS=1,
                                                                  LOOPED=False, num_warps=wp))
            rows.append({"kernel": "layernorm", "dtype": str(dtype)[6:], "variant": {"warps": wp}, "ms": t,
                         "compile_ms": tlc})
            print(f"  ln warps={wp:2d}: {nbytes / t / 1e6:6.0f} GB/s  x compile {tlc / t:.3f}", flush=True)
        n = 1 << 26
        xs = [torch.randn(n, device=dev, dtype=dtype) for _ in range(3)]
        on = torch.empty_like(xs[0])
        acomp = torch.compile(lambda a, b, c: (a + b) * c)
        acomp(*xs)
        tac = ms(lambda: acomp(*xs))
        for blk, wp in ((1024, 4), (2048, 4), (2048, 8), (4096, 8), (4096, 16), (8192, 16)):
            t = ms(lambda blk=blk, wp=wp: add_mul.add_mul_kernel[(n // blk,)](*xs, on, n, BLOCK=blk, num_warps=wp))
            rows.append({"kernel": "add_mul", "dtype": str(dtype)[6:], "variant": {"block": blk, "warps": wp}, "ms": t,
                         "compile_ms": tac})
            print(f"  add_mul block={blk} warps={wp:2d}: {4 * n * xs[0].element_size() / t / 1e6:6.0f} GB/s  "
                  f"x compile {tac / t:.3f}", flush=True)
    out = os.environ.get("OUT")
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if out and cache:  # keep inductor's own kernels for reading (their launch configs)
        with open(os.path.join(out, "inductor_kernels.txt"), "w") as fh:
            for f in sorted(glob.glob(os.path.join(cache, "**", "*.py"), recursive=True)):
                text = Path(f).read_text()
                if "@triton.jit" in text and ("rsqrt" in text or "layer_norm" in text or "var_mean" in text):
                    fh.write(f"#### {f}\n{text}\n")


@triton.jit
def _rms_loop(x_ptr, w_ptr, o_ptr, N, eps, CHUNK: tl.constexpr):
    """Two passes over the row in CHUNK pieces: the first keeps x in L2 (evict_last), the second reads it back."""
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((CHUNK,), dtype=tl.float32)
    for off in tl.range(0, N, CHUNK):
        cols = off + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for off in tl.range(0, N, CHUNK):
        cols = off + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(o_ptr + row * N + cols, (x * rstd * w).to(o_ptr.dtype.element_ty), mask=cols < N)


@triton.jit
def _ln_loop(x_ptr, w_ptr, b_ptr, o_ptr, N, eps, CHUNK: tl.constexpr):
    """LayerNorm in two passes; statistics of x - x[0] (a shift keeps E[d^2] - E[d]^2 from cancelling)."""
    row = tl.program_id(0).to(tl.int64)
    shift = tl.load(x_ptr + row * N).to(tl.float32)
    s1 = tl.zeros((CHUNK,), dtype=tl.float32)
    s2 = tl.zeros((CHUNK,), dtype=tl.float32)
    for off in tl.range(0, N, CHUNK):
        cols = off + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        d = tl.where(cols < N, x - shift, 0.0)
        s1 += d
        s2 += d * d
    m1 = tl.sum(s1, axis=0) / N
    var = tl.maximum(tl.sum(s2, axis=0) / N - m1 * m1, 0.0)
    mean = shift + m1
    rstd = 1.0 / tl.sqrt(var + eps)
    for off in tl.range(0, N, CHUNK):
        cols = off + tl.arange(0, CHUNK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(b_ptr + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(o_ptr + row * N + cols, ((x - mean) * rstd * w + b).to(o_ptr.dtype.element_ty), mask=cols < N)


def tune_rows_looped(dev, ceil, rows) -> None:  # type: ignore[no-untyped-def]
    """The looped two-pass form torch.compile generates for these norms, at several chunk sizes and warp counts."""
    from rocm_triton_doctor.kernels import layernorm, rmsnorm

    M, N = 65536, 8192
    for dtype in (torch.float32, torch.bfloat16):
        x, w, b, o, nbytes, tc = _norm_setup(dev, dtype, M, N)
        lcomp = torch.compile(lambda x, w, b: torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5))
        lcomp(x, w, b)
        tlc = ms(lambda: lcomp(x, w, b))
        tp = ms(lambda: rmsnorm.rmsnorm(x, w, out=o))
        tlp = ms(lambda: layernorm.layernorm(x, w, b, out=o))
        print(f"{str(dtype)[6:]}: rms production x compile {tc / tp:.3f}; ln production x compile {tlc / tlp:.3f}",
              flush=True)
        ref_r = rmsnorm.eager(x, w).float()
        ref_l = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
        for chunk in (1024, 2048, 4096):
            for wp in (4, 8, 16):
                t = ms(lambda chunk=chunk, wp=wp: _rms_loop[(M,)](x, w, o, N, 1e-6, CHUNK=chunk, num_warps=wp))
                err = (o.float() - ref_r).abs().max().item()
                tl_ = ms(lambda chunk=chunk, wp=wp: _ln_loop[(M,)](x, w, b, o, N, 1e-5, CHUNK=chunk, num_warps=wp))
                lerr = (o.float() - ref_l).abs().max().item()
                rows.append({"kernel": "norm_looped", "dtype": str(dtype)[6:], "chunk": chunk, "warps": wp,
                             "rms_ms": t, "rms_compile_ms": tc, "ln_ms": tl_, "ln_compile_ms": tlc,
                             "rms_err": err, "ln_err": lerr})
                print(f"  chunk={chunk} warps={wp:2d}: rms {nbytes / t / 1e6:6.0f} GB/s x compile {tc / t:.3f} "
                      f"(err {err:.1e}); ln {nbytes / tl_ / 1e6:6.0f} GB/s x compile {tlc / tl_:.3f} (err {lerr:.1e})",
                      flush=True)


def tune_tma_gemm(dev, ceil, rows) -> None:  # type: ignore[no-untyped-def]
    """The persistent TMA GEMM (gemm.gemm_tma_kernel) at several tiles and stage counts against the pointer kernel and
    cuBLAS, same epilogues. (The sweep that chose it, with and without warp specialisation and loop flattening, is
    docs/measurements/2026-11-21-h200-tune-6.json.)"""
    cfgs = [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": st}
            for bm, bn, bk, st, w in ((128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 3, 8),
                                      (128, 128, 64, 4, 4))]
    for dtype in (torch.float16, torch.bfloat16):
        for n in (4096, 8192):
            A = torch.randn(n, n, device=dev, dtype=dtype)
            B = torch.randn(n, n, device=dev, dtype=dtype) / n**0.5
            bias = torch.randn(n, device=dev, dtype=dtype)
            C = torch.empty(n, n, device=dev, dtype=dtype)
            fns = {"none": lambda: A @ B, "bias_relu": lambda: torch.relu(A @ B + bias),
                   "bias_relu+dropout": lambda: torch.nn.functional.dropout(torch.relu(A @ B + bias), 0.1, True)}
            eager = {k: ms(f) for k, f in fns.items()}
            for epi, p in (("none", 0.0), ("bias_relu", 0.0), ("bias_relu+dropout", 0.1)):
                kind = "bias_relu" if epi != "none" else "none"
                bb = bias if kind != "none" else None
                tp = ms(lambda kind=kind, p=p, bb=bb: gemm.gemm(A, B, bb, kind, p=p, seed=1, out=C, kernel="pointer"))
                ref = gemm.gemm(A, B, bb, kind, p=p, seed=1, kernel="pointer").float()
                print(f"tma {str(dtype)[6:]} {n} {epi:18s} pointer {2 * n**3 / tp / 1e9:5.0f} TF/s x eager "
                      f"{eager[epi] / tp:.3f}", flush=True)
                for cfg in cfgs:
                    def run(cfg=cfg, kind=kind, p=p, bb=bb):  # type: ignore[no-untyped-def]
                        gemm.gemm(A, B, bb, kind, p=p, seed=1, out=C, config=cfg, kernel="tma")

                    try:
                        t = ms(run)
                        run()
                        err = (C.float() - ref).abs().max().item()
                    except Exception as exc:  # noqa: BLE001
                        print(f"  tma fail {cfg}: {str(exc).splitlines()[0][:150]}", flush=True)
                        continue
                    rows.append({"kernel": "gemm_tma", "dtype": str(dtype)[6:], "n": n, "epilogue": epi, "config": cfg,
                                 "ms": t, "pointer_ms": tp, "eager_ms": eager[epi], "matmul_ms": eager["none"],
                                 "err_vs_pointer": err})
                    print(f"  {cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} s{cfg['num_stages']} w{cfg['num_warps']}: "
                          f"{2 * n**3 / t / 1e9:5.0f} TF/s x eager {eager[epi] / t:.3f}  x pointer {tp / t:.3f}  "
                          f"(max diff {err:.1e})", flush=True)


def tune_attention_tma(dev, ceil, rows) -> None:  # type: ignore[no-untyped-def]
    """The TMA attention kernel (attention_tma.attn_fwd_tma_kernel) at several tiles and stage counts against the pointer
    kernel and SDPA (the sweep that chose it is docs/measurements/2026-11-21-h200-tune-8.json)."""
    B, H, S, D = 4, 32, 4096, 128
    q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
    cfgs = [(128, 64, 3, 8), (128, 128, 2, 8), (128, 128, 3, 8), (128, 64, 4, 8)]
    for causal in (False, True):
        ts = ms(lambda causal=causal: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
        ref = attention.attention(q, k, v, causal, kernel="pointer")
        tp = ms(lambda causal=causal: attention.attention(q, k, v, causal, kernel="pointer"))
        fl = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
        print(f"attn_tma causal={causal}: pointer {fl / tp / 1e9:.0f} TF/s x SDPA {ts / tp:.3f}", flush=True)
        for bm, bn, st, wp in cfgs:
            o = torch.empty_like(q)

            def run(bm=bm, bn=bn, st=st, wp=wp, causal=causal, o=o):  # type: ignore[no-untyped-def]
                attention.attention(q, k, v, causal, out=o, kernel="tma",
                                    config={"BLOCK_M": bm, "BLOCK_N": bn, "num_stages": st, "num_warps": wp})

            try:
                t = ms(run)
                run()
                err = (o.float() - ref.float()).abs().max().item()
            except Exception as exc:  # noqa: BLE001
                print(f"  fail {bm}x{bn} s{st} w{wp}: {str(exc).splitlines()[0][:150]}", flush=True)
                continue
            rows.append({"kernel": "attention_tma", "causal": causal, "config": [bm, bn, st, wp], "ms": t,
                         "sdpa_ms": ts, "pointer_ms": tp, "err_vs_pointer": err})
            print(f"  {bm}x{bn} s{st} w{wp}: {fl / t / 1e9:4.0f} TF/s x SDPA {ts / t:.3f} x pointer {tp / t:.3f} "
                  f"(max diff {err:.1e})", flush=True)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


if __name__ == "__main__":
    sys.exit(main())
