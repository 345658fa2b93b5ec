"""Session 26: rows whose width is not a multiple of 16 bytes (an odd width in 16 bits, N % 4 != 0 in fp32) start off
a 16-byte boundary, so every load and store of x and y is scalar (ld.global.b16). The hunts' rows at odd widths ran
at 21-65 % of copy (seed 20: LayerNorm fp16 20189x6163 21 %, RMSNorm fp16 41409x6909 57 %; eager and Liger alike).

This times prototypes of a row read in 16-byte windows: the row's aligned-down start, loads masked per 16-byte group
(a group holding any of the row's elements is read whole: it cannot cross a page, and the elements outside the row
are discarded with tl.where), then the full groups stored whole and the first and last partial groups element by
element. WIN=0 is the plain single-pass row (one program a row), WIN=1 loads by windows and stores element by element,
WIN=2 loads and stores by windows. W_GATHER: the weight read aligned and rotated by tl.gather instead of read at the
row's shift element by element. Against the product kernel, eager, and the same op at the nearest width that is a
multiple of 8 (the ceiling alignment gives). GPU time (CUDA-graph replay); every output checked first.

    PYTHONPATH=.:benchmarks python benchmarks/odd_rows_probe.py --json odd-rows.json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import layernorm, rmsnorm, softmax
from rocm_triton_doctor.kernels.tolerances import tolerance


@triton.jit
def proto_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, sx, eps, OP: tl.constexpr, BLOCK: tl.constexpr, V: tl.constexpr,
                 WIN: tl.constexpr, W_GATHER: tl.constexpr):
    # OP 0 RMSNorm, 1 LayerNorm, 2 softmax. The output has x's row stride (both contiguous here).
    r = tl.program_id(0).to(tl.int64)
    o = r * sx
    idx = tl.arange(0, BLOCK)
    if WIN > 0:
        s = (o % V).to(tl.int32)
        base = tl.multiple_of(o - s, V)
        g = idx // V
        raw = tl.load(x_ptr + base + idx, mask=g < (s + N + V - 1) // V, other=0.0)
        j = idx - s
        inrow = (j >= 0) & (j < N)
    else:
        s = 0
        base = o
        raw = tl.load(x_ptr + base + idx, mask=idx < N, other=0.0)
        j = idx
        inrow = idx < N
    if OP == 2:
        x = tl.where(inrow, raw.to(tl.float32), -float("inf"))
        mx = tl.max(x, axis=0)
        e = tl.exp(x - mx)
        a = 1.0 / tl.sum(e, axis=0)
        y = e * a
    else:
        x = tl.where(inrow, raw.to(tl.float32), 0.0)
        if W_GATHER:
            wa = tl.load(w_ptr + idx, mask=idx // V < (N + V - 1) // V, other=0.0).to(tl.float32)
            w = tl.gather(wa, tl.where(inrow, j, 0), 0)
        else:
            w = tl.load(w_ptr + j, mask=inrow, other=0.0).to(tl.float32)
        if OP == 0:
            a = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
            y = x * a * w
            mx = 0.0
        else:
            mx = tl.sum(x, axis=0) / N
            d = tl.where(inrow, x - mx, 0.0)
            a = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
            if W_GATHER:
                ba = tl.load(b_ptr + idx, mask=idx // V < (N + V - 1) // V, other=0.0).to(tl.float32)
                bb = tl.gather(ba, tl.where(inrow, j, 0), 0)
            else:
                bb = tl.load(b_ptr + j, mask=inrow, other=0.0).to(tl.float32)
            y = d * a * w + bb
    if WIN == 2:
        g = idx // V
        body = (g >= (s + V - 1) // V) & (g < (s + N) // V)
        tl.store(out_ptr + base + idx, y.to(out_ptr.dtype.element_ty), mask=body)
        # The first and last partial groups: V elements each, recomputed from a reload of x (cached).
        h = tl.arange(0, V)
        for edge in tl.static_range(2):
            if edge == 0:
                p = h
            else:
                p = ((s + N) // V) * V + h
            jj = p - s
            em = (jj >= 0) & (jj < N) & ((p < V) | (edge == 1))
            xe = tl.load(x_ptr + base + p, mask=em, other=0.0).to(tl.float32)
            if OP == 2:
                ye = tl.exp(xe - mx) * a
            else:
                we = tl.load(w_ptr + jj, mask=em, other=0.0).to(tl.float32)
                if OP == 0:
                    ye = xe * a * we
                else:
                    ye = (xe - mx) * a * we + tl.load(b_ptr + jj, mask=em, other=0.0).to(tl.float32)
            tl.store(out_ptr + base + p, ye.to(out_ptr.dtype.element_ty), mask=em)
    else:
        tl.store(out_ptr + base + idx, y.to(out_ptr.dtype.element_ty), mask=inrow)


@triton.jit
def table_kernel(w_ptr, b_ptr, wt_ptr, bt_ptr, N, LD, V: tl.constexpr, BLOCK: tl.constexpr, BIAS: tl.constexpr):
    # wt[s, p] = w[p - s] for s < V (0 outside the row): a parameter pre-shifted for each row start's residue.
    s = tl.program_id(0)
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    j = p - s
    m = (j >= 0) & (j < N)
    tl.store(wt_ptr + s * LD + p, tl.load(w_ptr + j, mask=m, other=0.0), mask=p < LD)
    if BIAS:
        tl.store(bt_ptr + s * LD + p, tl.load(b_ptr + j, mask=m, other=0.0), mask=p < LD)


@triton.jit
def proto2_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, sx, LD, eps, OP: tl.constexpr, BLOCK: tl.constexpr,
                  V: tl.constexpr, EDGE: tl.constexpr, WMODE: tl.constexpr, R: tl.constexpr):
    # Rows pid // V * V * R + pid % V + k * V (k < R) share a start residue, so a shift and the parameters' loads.
    pid = tl.program_id(0)
    r0 = (pid // V).to(tl.int64) * V * R + pid % V
    s = ((r0 * sx) % V).to(tl.int32)
    idx = tl.arange(0, BLOCK)
    g = idx // V
    gmask = g < (s + N + V - 1) // V
    j = idx - s
    inrow = (j >= 0) & (j < N)
    body = (g >= (s + V - 1) // V) & (g < (s + N) // V)
    edge = inrow & ((g < (s + V - 1) // V) | (g >= (s + N) // V))
    if OP != 2:
        if WMODE == 1:
            wofs = tl.multiple_of(s * LD, V)
            w = tl.load(w_ptr + wofs + idx, mask=gmask, other=0.0).to(tl.float32)
            if OP == 1:
                bb = tl.load(b_ptr + wofs + idx, mask=gmask, other=0.0).to(tl.float32)
        else:
            w = tl.load(w_ptr + j, mask=inrow, other=0.0).to(tl.float32)
            if OP == 1:
                bb = tl.load(b_ptr + j, mask=inrow, other=0.0).to(tl.float32)
    for k in range(R):
        r = r0 + k * V
        if r < M:
            base = tl.multiple_of(r * sx - s, V)
            raw = tl.load(x_ptr + base + idx, mask=gmask, other=0.0)
            if OP == 2:
                x = tl.where(inrow, raw.to(tl.float32), -float("inf"))
                e = tl.exp(x - tl.max(x, axis=0))
                y = e * (1.0 / tl.sum(e, axis=0))
            else:
                x = tl.where(inrow, raw.to(tl.float32), 0.0)
                if OP == 0:
                    y = x * (1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)) * w
                else:
                    mu = tl.sum(x, axis=0) / N
                    d = tl.where(inrow, x - mu, 0.0)
                    y = d * (1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)) * w + bb
            y = y.to(out_ptr.dtype.element_ty)
            tl.store(out_ptr + base + idx, y, mask=body)
            tl.store(out_ptr + base + idx, y, mask=edge)


def proto2(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, wmode: int, rows: int,
           warps: int) -> torch.Tensor:
    M, N = x.shape
    V = 16 // x.element_size()
    out = torch.empty_like(x)
    block = triton.next_power_of_2(N + V - 1)
    LD = (N + 2 * V - 1) // V * V
    wt, bt = w, b
    if op != "softmax" and wmode == 1:
        wt = torch.empty((V, LD), dtype=w.dtype, device=w.device)
        bt = torch.empty((V, LD), dtype=b.dtype, device=b.device) if op == "layernorm" else wt
        table_kernel[(V, triton.cdiv(LD, 1024))](w, b, wt, bt, N, LD, V=V, BLOCK=1024, BIAS=op == "layernorm")
    groups = triton.cdiv(M, V * rows)
    proto2_kernel[(groups * V,)](x, wt, bt, out, M, N, x.stride(0), LD, 1e-5, OP=OPS[op], BLOCK=block, V=V, EDGE=0,
                                 WMODE=wmode, R=rows, num_warps=warps)
    return out


OPS = {"rmsnorm": 0, "layernorm": 1, "softmax": 2}


def proto(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, win: int, gather: bool,
          warps: int) -> torch.Tensor:
    M, N = x.shape
    V = 16 // x.element_size()
    out = torch.empty_like(x)
    block = triton.next_power_of_2(N + (V - 1 if win else 0))
    proto_kernel[(M,)](x, w, b, out, N, x.stride(0), 1e-5, OP=OPS[op], BLOCK=block, V=V, WIN=win, W_GATHER=gather,
                       num_warps=warps)
    return out


def product(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if op == "rmsnorm":
        return rmsnorm.rmsnorm(x, w, 1e-5)
    if op == "layernorm":
        return layernorm.layernorm(x, w, b, 1e-5)
    return softmax.softmax(x)


def eager(op: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if op == "rmsnorm":
        return F.rms_norm(x, (x.shape[1],), w, 1e-5)
    if op == "layernorm":
        return F.layer_norm(x, (x.shape[1],), w, b, 1e-5)
    return torch.softmax(x, -1)


SHAPES = (("layernorm", torch.float16, 20189, 6163), ("rmsnorm", torch.float16, 41409, 6909),
          ("softmax", torch.bfloat16, 16384, 4097), ("rmsnorm", torch.bfloat16, 65536, 3001),
          ("layernorm", torch.bfloat16, 65536, 1999), ("softmax", torch.float16, 8192, 12799),
          ("rmsnorm", torch.float32, 32768, 5001), ("layernorm", torch.float32, 343812, 751),
          ("softmax", torch.float32, 65536, 1023))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    src = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    copy_gbps = 2 * src.numel() / float(do_bench_cudagraph(lambda: dst.copy_(src), rep=30)) / 1e6
    print(f"copy {copy_gbps:.0f} GB/s", flush=True)
    rows: list[dict[str, Any]] = []
    for op, dt, m, n in SHAPES:
        for width in (n, (n + 7) // 8 * 8):
            x = torch.randn(m, width, device=dev, dtype=dt)
            w = torch.randn(width, device=dev, dtype=dt)
            b = torch.randn(width, device=dev, dtype=dt)
            ref = eager(op, x.double(), w.double(), b.double()) if x.numel() < 2**27 else None
            fns = {"eager": lambda: eager(op, x, w, b), "product": lambda: product(op, x, w, b)}
            V = 16 // x.element_size()
            big = triton.next_power_of_2(width + V - 1) * x.element_size() > 32768
            for warps in ((8, 16) if big else (4, 8)):
                fns[f"plain w{warps}"] = lambda wp=warps: proto(op, x, w, b, 0, False, wp)
                if width == n:
                    fns[f"win-load w{warps}"] = lambda wp=warps: proto(op, x, w, b, 1, False, wp)
                    fns[f"win-all w{warps}"] = lambda wp=warps: proto(op, x, w, b, 2, False, wp)
                    for rr in (1, 4):
                        for wm in ((0,) if op == "softmax" else (0, 1)):
                            fns[f"v2 R{rr} W{wm} w{warps}"] = (
                                lambda wp=warps, rr=rr, wm=wm: proto2(op, x, w, b, wm, rr, wp))
            row: dict[str, Any] = {"op": op, "dtype": str(dt).replace("torch.", ""), "M": m, "N": width, "us": {},
                                   "wrong": []}
            mib = 2 * x.numel() * x.element_size() / 2**20
            for k, f in fns.items():
                try:
                    y = f()
                    if ref is not None:
                        tol = tolerance(str(dt).replace("torch.", ""))
                        if not torch.allclose(y.double(), ref, atol=tol.atol, rtol=tol.rtol):
                            row["wrong"].append(k)
                            err = (y.double() - ref).abs().max().item()
                            print(f"  WRONG {k} max err {err:.3g}", flush=True)
                            continue
                    row["us"][k] = 1000 * float(do_bench_cudagraph(f, rep=30))
                except Exception as exc:  # noqa: BLE001
                    row.setdefault("errors", {})[k] = str(exc).splitlines()[0][:200]
                    print(f"  ERROR {k}: {row['errors'][k]}", flush=True)
            row["pct_copy"] = {k: 100 * mib * 2**20 / (v * 1e-6) / (copy_gbps * 1e9) for k, v in row["us"].items()}
            rows.append(row)
            best = min(row["us"].items(), key=lambda kv: kv[1])
            print(f"{op:9s} {row['dtype']:8s} {m}x{width}: " + "  ".join(
                f"{k} {v:.1f}" for k, v in row["us"].items()) + f"  | best {best[0]} "
                f"{row['pct_copy'][best[0]]:.0f}% copy", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "triton": triton.__version__, "copy_gbps": copy_gbps, "rows": rows}, fh, indent=1)
    print("\nop        dtype    shape           eager  product  best-plain  best-window  (% of copy)")
    for r in rows:
        u, p = r["us"], r["pct_copy"]
        plain = min((k for k in u if k.startswith("plain")), key=u.get, default=None)
        win = min((k for k in u if k.startswith("win")), key=u.get, default=None)
        print(f"{r['op']:9s} {r['dtype']:8s} {r['M']}x{r['N']:<8d} {p.get('eager', 0):5.0f}  {p.get('product', 0):6.0f}  "
              f"{p.get(plain, 0):6.0f} {plain or '':10s} " + (f"{p[win]:5.0f} {win}" if win else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
