"""Issue #16: the kernels' BACKWARD on random shapes — what a training step pays, forward + backward, against eager
autograd and Liger-Kernel's autograd Functions (where it has the op).

shape_hunt.py draws random forward calls; no hunt had timed a gradient. This draws random shapes per op (RMSNorm,
LayerNorm, softmax, SwiGLU, bias+GELU+residual, attention, GEMM with its epilogues), checks every gradient against
fp64 autograd of the same function (our error must stay within 3x eager's own error in the same dtype, or inside the
dtype's tolerance), and times one forward + backward in GPU time (CUDA-graph replay; event time where a capture
fails) and the forward alone, so the backward's share can be read off.

    PYTHONPATH=.:benchmarks python benchmarks/backward_hunt.py --seed 1 --seconds 240 --json bwd.json

Prints the worst rows (forward + backward GPU time x the best baseline) per op last.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any
from collections.abc import Callable

import torch
import torch.nn.functional as F
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import (attention, bias_gelu_dropout_residual, gemm, gemm_autograd, layernorm, rmsnorm,
                                        softmax, swiglu)
from rocm_triton_doctor.smoke import baselines
from shape_hunt import log_uniform

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
OPS = ("rmsnorm", "layernorm", "softmax", "swiglu", "bias_gelu", "attention", "gemm")
DEVICE = "cuda"  # the dry run in tests sets "cpu" (the interpreter)
FLOOR = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}  # relative error any kernel may have


class Draw:
    """One drawn problem: its leaves' shapes (a maker each), our function, eager's, Liger's (or None), a name."""

    def __init__(self, name: str, dt: torch.dtype, makers: list[Callable[[torch.Generator], torch.Tensor]],
                 ours: Callable[..., torch.Tensor], eager: Callable[..., torch.Tensor],
                 liger: Callable[..., torch.Tensor] | None = None,
                 ref: Callable[..., torch.Tensor] | None = None) -> None:
        self.name, self.dt, self.makers, self.ours, self.eager, self.liger = name, dt, makers, ours, eager, liger
        self.ref = ref or eager  # what fp64 autograd differentiates (eager's function unless it casts to fp32)


def _t(shape: tuple[int, ...], dt: torch.dtype, t: bool = False) -> Callable[[torch.Generator], torch.Tensor]:
    """A maker of a random leaf of `shape`; t: the transpose of a contiguous tensor (nn.Linear's weight layout)."""
    def make(g: torch.Generator) -> torch.Tensor:
        s = shape[::-1] if t else shape
        x = torch.randn(s, generator=g, device=DEVICE, dtype=torch.float32).to(dt)
        return x.t() if t else x
    return make


def _liger(name: str) -> Any:
    if baselines.liger_status():
        return None
    import liger_kernel.ops as ops
    return getattr(ops, name, None)


def draw_rows(r: random.Random, op: str) -> Draw:
    dts = r.choice(("bf16", "bf16", "fp16", "fp32"))
    n = log_uniform(r, 2, 300_000)
    return row_problem(op, dts, max(1, log_uniform(r, 1 << 16, 1 << 29) // DT[dts].itemsize // n), n)


def row_problem(op: str, dts: str, m: int, n: int) -> Draw:
    """A row op (rmsnorm, layernorm, softmax, swiglu) on (m, n) rows of dtype dts."""
    dt = DT[dts]
    name = f"{op} {dts} {m}x{n}"
    if op == "rmsnorm":
        lf = _liger("LigerRMSNormFunction")
        return Draw(name, dt, [_t((m, n), dt), _t((n,), dt)], lambda x, w: rmsnorm.rmsnorm_autograd(x, w),
                    lambda x, w: rmsnorm.eager(x, w), lf and (lambda x, w: lf.apply(x, w, 1e-6)),
                    lambda x, w: rmsnorm.reference(x, w))
    if op == "layernorm":
        lf = _liger("LigerLayerNormFunction")
        return Draw(name, dt, [_t((m, n), dt), _t((n,), dt), _t((n,), dt)],
                    lambda x, w, b: layernorm.layernorm_autograd(x, w, b),
                    lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), lf and (lambda x, w, b: lf.apply(x, w, b, 1e-5)))
    if op == "softmax":
        lf = _liger("LigerSoftmaxFunction")
        return Draw(name, dt, [_t((m, n), dt)], lambda x: softmax.softmax_autograd(x), lambda x: torch.softmax(x, -1),
                    lf and (lambda x: lf.apply(x)))
    lf = _liger("LigerSiLUMulFunction")
    return Draw(name, dt, [_t((m, n), dt), _t((m, n), dt)], lambda a, b: swiglu.swiglu_autograd(a, b),
                lambda a, b: F.silu(a) * b, lf and (lambda a, b: lf.apply(a, b)))


def draw_bias_gelu(r: random.Random, _op: str) -> Draw:
    dts = r.choice(("bf16", "fp16", "fp32"))
    dt = DT[dts]
    h = log_uniform(r, 64, 20000)
    rows = max(1, log_uniform(r, 1 << 14, (1 << 28) // dt.itemsize) // h)
    return Draw(f"bias_gelu_residual {dts} {rows}x{h}", dt, [_t((rows, h), dt), _t((h,), dt), _t((rows, h), dt)],
                lambda x, b, res: bias_gelu_dropout_residual.bias_gelu_dropout_residual_autograd(x, b, res, 0.0),
                lambda x, b, res: res + F.gelu(x + b, approximate="tanh"))


def draw_attention(r: random.Random, _op: str) -> Draw:
    dts = r.choice(("bf16", "bf16", "fp16"))
    dt = DT[dts]
    d = r.choice((32, 64, 64, 80, 96, 128, 128, 256))
    h = r.choice((4, 8, 12, 16, 24, 32))
    hk = r.choice([x for x in (1, 2, 4, 8, h) if h % x == 0])
    s = log_uniform(r, 64, 8192)
    sk = s if r.random() < 0.8 else log_uniform(r, 64, 8192)
    b = max(1, min(16, log_uniform(r, 1, 16)))
    while b * h * s * sk * 8 > 6e9 and b > 1:  # the fp64 reference's score matrix stays under ~6 GB
        b //= 2
    while b * h * s * sk * 8 > 6e9:
        s, sk = max(64, s // 2), max(64, sk // 2)
    causal = r.random() < 0.5
    bshd = r.random() < 0.5

    def leaf(heads: int, seq: int) -> Callable[[torch.Generator], torch.Tensor]:
        if not bshd:
            return _t((b, heads, seq, d), dt)
        inner = _t((b, seq, heads, d), dt)
        # The model layout: (B, S, H, D) viewed as (B, H, S, D); requires_grad is set on this view's base by run().
        return lambda g: inner(g).transpose(1, 2)

    name = f"attention {dts} B{b} H{h}/{hk} S{s}" + (f"x{sk}" if sk != s else "") + f" D{d}" + \
        (" causal" if causal else "") + (" BSHD" if bshd else "")
    return Draw(name, dt, [leaf(h, s), leaf(hk, sk), leaf(hk, sk)],
                lambda q, k, v: attention.autograd_op(q, k, v, causal),
                lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hk != h))


def draw_gemm(r: random.Random, _op: str) -> Draw:
    dts = r.choice(("bf16", "bf16", "fp16", "fp32"))
    dt = DT[dts]
    m = r.choice((log_uniform(r, 1, 16), log_uniform(r, 17, 16384), log_uniform(r, 17, 16384)))
    k = log_uniform(r, 16, 16384)
    n = log_uniform(r, 16, 32768)
    while 6.0 * m * n * k > 6e12:
        n, k = max(16, n // 2), max(16, k // 2)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    bt = r.random() < 0.5
    name = f"gemm {dts} {m}x{k}x{n} {epi}" + (" B^T" if bt else "")
    leaves = [_t((m, k), dt), _t((k, n), dt, t=bt)]
    if epi == "none":
        return Draw(name, dt, leaves, lambda a, b: gemm_autograd.gemm_autograd(a, b), lambda a, b: a @ b)
    return Draw(name, dt, leaves + [_t((n,), dt)], lambda a, b, c: gemm_autograd.gemm_autograd(a, b, c, epi),
                lambda a, b, c: gemm.eager(a, b, c, epi, 0.0))


DRAW: dict[str, Callable[[random.Random, str], Draw]] = {
    "rmsnorm": draw_rows, "layernorm": draw_rows, "softmax": draw_rows, "swiglu": draw_rows,
    "bias_gelu": draw_bias_gelu, "attention": draw_attention, "gemm": draw_gemm}


def leaves_of(d: Draw, g: torch.Generator) -> list[torch.Tensor]:
    out = []
    for mk in d.makers:
        t = mk(g)
        out.append(t.requires_grad_() if t.is_leaf else t.detach().requires_grad_())
    return out


def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    scale = max(float(ref.abs().max()), 1e-30)
    return float((got.double() - ref).abs().max()) / scale


def check(d: Draw, leaves: list[torch.Tensor], dy: torch.Tensor) -> tuple[bool, list[str], dict[str, float]]:
    """Every gradient against fp64 autograd of eager's function: ours within 3x eager's error or the dtype floor."""
    doubles = [t.detach().double().requires_grad_() for t in leaves]
    ref = torch.autograd.grad(d.ref(*doubles), doubles, dy.double())
    got = torch.autograd.grad(d.ours(*leaves), leaves, dy)
    eag = torch.autograd.grad(d.eager(*leaves), leaves, dy)
    problems, errs = [], {}
    for i, (g, e, rf) in enumerate(zip(got, eag, ref)):
        eo, ee = rel_err(g, rf), rel_err(e, rf)
        errs[f"d{i}"] = eo
        errs[f"d{i}_eager"] = ee
        if not (eo <= max(3 * ee, FLOOR[d.dt])) or not torch.isfinite(g).all():
            problems.append(f"grad {i}: rel err {eo:.3g} (eager {ee:.3g})")
    return not problems, problems, errs


def gpu_ms(fn: Callable[[], Any]) -> float | None:
    try:
        return float(do_bench_cudagraph(fn, rep=20))
    except Exception:  # noqa: BLE001 - a capture failure is a missing number
        return None


def event_ms(fn: Callable[[], Any]) -> float:
    return float(do_bench(fn, warmup=5, rep=20, return_mode="median"))


def run_one(d: Draw, g: torch.Generator) -> dict[str, Any]:
    row: dict[str, Any] = {"name": d.name, "op": d.name.split()[0]}
    try:
        leaves = leaves_of(d, g)
        with torch.no_grad():
            y0 = d.ours(*leaves)
        dy = torch.randn(y0.shape, generator=g, device=DEVICE, dtype=torch.float32).to(y0.dtype)
        del y0
        row["ok"], row["problems"], row["errors"] = check(d, leaves, dy)
    except (ValueError, TypeError, RuntimeError) as exc:
        row.update(ok=False, problems=[f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"])
        torch.cuda.empty_cache()
        return row
    torch.cuda.empty_cache()
    fns = {"ours": d.ours, "eager": d.eager}
    # Liger writes gradients into its inputs and dy (SwiGLU's backward into a and b, RMSNorm's in_place into dy):
    # it gets copies, so the others' inputs stay as drawn.
    args = {"ours": (leaves, dy), "eager": (leaves, dy)}
    if d.liger is not None:
        fns["liger"] = d.liger
        args["liger"] = ([t.detach().clone().requires_grad_() for t in leaves], dy.clone())
    for k in [k for k in fns if k != "ours"]:
        try:
            torch.autograd.grad(fns[k](*args[k][0]), args[k][0], args[k][1])
        except Exception as exc:  # noqa: BLE001 - a baseline that refuses the shape drops out
            row[f"{k}_error"] = str(exc).splitlines()[0][:120]
            del fns[k]
    fb = {k: (lambda f=f, a=args[k]: torch.autograd.grad(f(*a[0]), a[0], a[1])) for k, f in fns.items()}
    fwd = {k: (lambda f=f, a=args[k]: f(*[t.detach() for t in a[0]])) for k, f in fns.items()}
    row["fb_gpu_ms"] = {k: gpu_ms(f) for k, f in fb.items()}
    row["fb_event_ms"] = {k: event_ms(f) for k, f in fb.items()}
    row["f_gpu_ms"] = {k: gpu_ms(f) for k, f in fwd.items()}
    for key, src in (("gpu_x_best", "fb_gpu_ms"), ("event_x_best", "fb_event_ms"), ("fwd_gpu_x_best", "f_gpu_ms")):
        t = row[src]
        base = [v for k, v in t.items() if k != "ours" and v]
        if t.get("ours") and base:
            row[key] = min(base) / t["ours"]
    fo, fbo = row["f_gpu_ms"].get("ours"), row["fb_gpu_ms"].get("ours")
    if fo and fbo:  # the backward's own GPU time, ours and the best baseline's (fb - f)
        bb = [row["fb_gpu_ms"][k] - row["f_gpu_ms"][k] for k in fns if k != "ours"
              and row["fb_gpu_ms"].get(k) and row["f_gpu_ms"].get(k)]
        if bb and fbo - fo > 0:
            row["bwd_x_best"] = min(bb) / (fbo - fo)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=240.0)
    ap.add_argument("--per-op", type=int, default=30)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    r = random.Random(args.seed)
    g = torch.Generator(device="cuda").manual_seed(args.seed)
    ops = [o for o in args.ops.split(",") if o]
    queue = [o for _ in range(args.per_op) for o in ops]
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for op in queue:
        if time.time() - t0 > args.seconds:
            break
        d = DRAW[op](r, op)
        try:
            row = run_one(d, g)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            row = {"name": d.name, "op": op, "ok": None, "problems": ["oom"]}
        rows.append(row)
        gx, bx = row.get("gpu_x_best"), row.get("bwd_x_best")
        print(f"[{time.time() - t0:6.1f}s] {d.name:58s} ok={row.get('ok')} f+b x best "
              f"{gx if gx is None else round(gx, 2)} bwd x best {bx if bx is None else round(bx, 2)} "
              f"{row.get('problems') or ''}", flush=True)
    doc = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "seed": args.seed,
           "seconds": round(time.time() - t0, 1), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    print(f"\n{doc['device']} seed {args.seed}: {len(rows)} rows in {doc['seconds']} s")
    bad = [x for x in rows if x.get("ok") is not True]
    print(f"wrong, refused or oom: {len(bad)}")
    for x in bad:
        print(f"  {x['name']}: {x['problems']}")
    for op in sorted({x["op"] for x in rows}):
        rs = sorted((x for x in rows if x["op"] == op and x.get("gpu_x_best")), key=lambda x: x["gpu_x_best"])
        if not rs:
            continue
        print(f"{op}: {len(rs)} rows, fwd+bwd GPU time x best median {rs[len(rs) // 2]['gpu_x_best']:.2f}; worst:")
        for x in rs[:5]:
            print(f"  {x['gpu_x_best']:5.2f} (bwd {x.get('bwd_x_best', 0):.2f}, fwd {x.get('fwd_gpu_x_best', 0):.2f}, "
                  f"event {x.get('event_x_best', 0):.2f})  {x['name']}  fb_ms "
                  + " ".join(f"{k}={v:.4f}" for k, v in x["fb_gpu_ms"].items() if v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
