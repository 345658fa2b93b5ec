"""Linear cross-entropy: where does the chunked op lose to eager, and what do the chunk size and the ∂W
accumulation (inside the GEMM, policy_lce.FUSED_ACCUMULATE, or a 16-bit product added after it, as before session
24) cost? Seed 17's worst LCE row was fp32 N3787 H1024 V12981 at 0.92x eager in 1024-row chunks.

Per shape: ours by the policy, ours with the accumulation after the GEMM ("apart"), ours with 2x and 4x the chunk
and in one chunk, eager (F.linear + F.cross_entropy + backward), and Liger-Kernel's fused_linear_cross_entropy_forward
(∂W accumulated in fp32 like ours, and in the weight dtype: its default). GPU time by CUDA-graph replay where the
call can be captured (Liger cannot: it syncs the host each call), and event time (no graphs) for every variant.
Every variant's ∂h and ∂W are checked against an fp64 reference (max error / max |ref|) before it is timed.

    PYTHONPATH=.:/tmp/site python benchmarks/lce_probe.py [--quick | --seed S -n N | --none] [--json PATH]
(--seed: shape_hunt's LCE draws, with "session 23" = the chunk rule and accumulation as session 23 left them)
"""

from __future__ import annotations

import argparse
import json
import math
import random
from typing import Any

import torch
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import linear_cross_entropy as lce
from rocm_triton_doctor.kernels import policy_lce

BF, FP16, FP32 = torch.bfloat16, torch.float16, torch.float32
SHAPES = [(3787, 1024, 12981, FP32), (8192, 2048, 32000, FP32), (2500, 768, 50257, FP32), (4096, 2048, 32000, BF),
          (8192, 4096, 128256, BF), (3000, 1024, 50257, BF), (2048, 3584, 151936, FP16), (777, 4096, 32000, BF)]
QUICK = SHAPES[:1] + SHAPES[3:4]


def old_chunk(N: int, V: int, H: int, e: int) -> int:
    """chunk_rows as session 23 left it (4·H/e rows, at least 1024; no fill bound)."""
    if N * V * e <= policy_lce.ONE_CHUNK_BYTES:
        return N
    return min(N, max(policy_lce.MIN_CHUNK_ROWS, (4 * H // e) // 128 * 128))


def draws(seed: int, n: int) -> list[tuple[int, int, int, torch.dtype]]:
    """shape_hunt.draw_lce's distribution: N 256-8192, H 512-4096, V 1000-152064, bf16 twice as often as fp32."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        dt = r.choice((BF, BF, FP32))
        out.append((int(math.exp(r.uniform(math.log(256), math.log(8192)))), r.choice((512, 1024, 2048, 4096)),
                    int(math.exp(r.uniform(math.log(1000), math.log(152064)))), dt))
    return out


def rel(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got.double() - want).abs().max() / want.abs().max().clamp_min(1e-30))


NONE_SHAPES = [(4096, 2048, 32000, BF), (3787, 1024, 12981, FP32), (8192, 4096, 128256, BF), (2048, 3584, 151936, FP16)]


def none_mode() -> None:
    """reduction="none" (session 24): forward + backward through autograd with a weight per token, ours against
    ours with "sum" (the gradients in the forward), eager and Liger-Kernel's "none" (which also makes the gradients
    in backward). Event time (Liger syncs the host); ∂h and ∂W of ours checked against fp64 first."""
    try:
        from liger_kernel.ops import LigerFusedLinearCrossEntropyFunction as LF
    except Exception:  # noqa: BLE001
        LF = None
    print("reduction='none', forward + backward, ms event-timed")
    for N, H, V, dt in NONE_SHAPES:
        g = torch.Generator(device="cuda").manual_seed(0)
        h = torch.randn(N, H, device="cuda", generator=g).to(dt).requires_grad_()
        w = (torch.randn(V, H, device="cuda", generator=g) * H ** -0.5).to(dt).requires_grad_()
        y = torch.randint(0, V, (N,), device="cuda", generator=g)
        rg = torch.rand(N, device="cuda", generator=g)

        def step(loss_fn: Any) -> Any:
            def fn() -> Any:
                h.grad = w.grad = None
                loss_fn().backward()
                return h.grad, w.grad
            return fn

        F = torch.nn.functional
        variants = {
            "ours none": step(lambda: (lce.linear_cross_entropy(h, w, y, reduction="none") * rg).sum()),
            "ours sum": step(lambda: lce.linear_cross_entropy(h, w, y, reduction="sum")),
            "eager none": step(lambda: (F.cross_entropy(F.linear(h, w), y, reduction="none").float() * rg).sum()),
        }
        if LF is not None:
            variants["liger none"] = step(lambda: (LF.apply(h, w, y, None, None, -100, 0.0, 0.0, "none")[0] * rg).sum())
        hd, wd = h.detach().double().requires_grad_(), w.detach().double().requires_grad_()
        (F.cross_entropy(F.linear(hd, wd), y, reduction="none") * rg.double()).sum().backward()
        gh, gw = variants["ours none"]()
        err = max(rel(gh, hd.grad), rel(gw, wd.grad))
        del hd, wd
        torch.cuda.empty_cache()
        times = {k: float(do_bench(f, warmup=3, rep=60)) for k, f in variants.items()}
        print(f"{str(dt)[6:]:9s} N{N} H{H} V{V}: err {err:.1e}  " + "  ".join(f"{k} {v:.2f}" for k, v in times.items())
              + f"  eager/ours {times['eager none'] / times['ours none']:.2f}"
              + (f"  liger/ours {times['liger none'] / times['ours none']:.2f}" if "liger none" in times else ""),
              flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=None, help="random shapes (draws) instead of SHAPES")
    ap.add_argument("-n", type=int, default=12)
    ap.add_argument("--none", action="store_true", help="reduction='none' forward + backward (none_mode)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.none:
        none_mode()
        return 0
    try:
        from liger_kernel.ops import fused_linear_cross_entropy_forward as liger
    except Exception:  # noqa: BLE001 - no Liger: its columns are empty
        liger = None
    rows = []
    shapes = draws(args.seed, args.n) if args.seed is not None else QUICK if args.quick else SHAPES
    for N, H, V, dt in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        h = torch.randn(N, H, device="cuda", generator=g).to(dt)
        w = (torch.randn(V, H, device="cuda", generator=g) * H ** -0.5).to(dt)
        y = torch.randint(0, V, (N,), device="cuda", generator=g)
        C = lce.chunk_rows(N, V, H, h.element_size())
        _, rh, rw, _ = lce.reference(h, w, y, reduction="sum")

        def ours(chunk: int | None = None, fused: bool = True) -> Any:
            def fn() -> Any:
                policy_lce.FUSED_ACCUMULATE = fused
                try:
                    return lce.forward_and_grads(h, w, None, y, reduction="sum", need_b=False, chunk=chunk)[1:3]
                finally:
                    policy_lce.FUSED_ACCUMULATE = True
            return fn

        def eager() -> Any:
            hh, ww = h.detach().requires_grad_(), w.detach().requires_grad_()
            loss = torch.nn.functional.cross_entropy(torch.nn.functional.linear(hh, ww), y, reduction="sum")
            return torch.autograd.grad(loss, (hh, ww))

        variants: dict[str, Any] = {"policy": ours(), "apart": ours(fused=False), "eager": eager}
        C0 = old_chunk(N, V, H, h.element_size())
        if C0 != C:
            variants["session 23"] = ours(C0, fused=False)
        if C < N and args.seed is None:
            variants.update({"chunk x2": ours(min(N, 2 * C)), "chunk x4": ours(min(N, 4 * C)), "one chunk": ours(N)})
        if liger is not None:
            variants["liger fp32 acc"] = lambda: liger(h, w, y, reduction="sum", accum_dtype=FP32,
                                                       compute_gradients=True, weight_requires_grad=True)[4:6]
            if dt != FP32:
                variants["liger default"] = lambda: liger(h, w, y, reduction="sum", compute_gradients=True,
                                                          weight_requires_grad=True)[4:6]
        row: dict[str, Any] = {"shape": f"{str(dt)[6:]} N{N} H{H} V{V}", "chunk": C, "err": {}, "gpu_ms": {},
                               "event_ms": {}}
        for name, fn in variants.items():
            gh, gw = fn()
            row["err"][name] = [round(rel(gh, rh), 6), round(rel(gw, rw), 6)]
            row["event_ms"][name] = float(do_bench(fn, warmup=3, rep=60))
            if not name.startswith("liger"):
                try:
                    row["gpu_ms"][name] = float(do_bench_cudagraph(fn, rep=60))
                except Exception as exc:  # noqa: BLE001
                    row["gpu_ms"][name] = None
                    row[f"{name}_graph_error"] = str(exc)[:120]
        del rh, rw
        torch.cuda.empty_cache()
        rows.append(row)
        ev, gp = row["event_ms"], row["gpu_ms"]
        print(f"{row['shape']:28s} C={C:5d} " + "  ".join(
            f"{k} {ev[k]:.2f}/{gp.get(k) or 0:.2f}ms e{max(row['err'][k]):.0e}" for k in variants), flush=True)
    print("\nms, event-timed (no graphs) / graph replay; x = eager / ours (policy), liger / ours")
    for row in rows:
        ev, gp = row["event_ms"], row["gpu_ms"]
        best = min(v for k, v in ev.items() if k in ("eager", "liger fp32 acc", "liger default"))
        print(f"{row['shape']:28s} policy {ev['policy']:.2f} apart {ev['apart']:.2f} eager {ev['eager']:.2f} "
              f"liger {ev.get('liger fp32 acc', 0):.2f}/{ev.get('liger default', 0):.2f}  graph x eager "
              f"{gp['eager'] / gp['policy']:.2f} (apart {gp['eager'] / gp['apart']:.2f})  event x best {best / ev['policy']:.2f}"
              + "".join(f"  {k} {ev[k]:.2f}" for k in ("chunk x2", "chunk x4", "one chunk", "session 23") if k in ev)
              + (f"  graph x eager s23 {gp['eager'] / gp['session 23']:.2f}" if gp.get("session 23") else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
