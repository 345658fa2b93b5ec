"""The optimizer step alone, on a model preset's real parameter list (issue #17: AdamW took ~17 ms of the medium
step on an H100): torch.optim.AdamW (foreach, the default), torch's fused=True, and kernels/adamw.py at several
block and chunk sizes, against the one-pass floor (7 x 4 bytes a parameter at the measured copy bandwidth). GPU time
(CUDA events around N back-to-back steps) and host time per step (enqueue, no sync); the tables last.

Usage (GPU): PYTHONPATH=.:benchmarks python benchmarks/adamw_probe.py [--presets medium,tiny-llama] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import torch

from rocm_triton_doctor.kernels import adamw
from rocm_triton_doctor.smoke import model_forms as mf


def _copy_gbs(n_bytes: int = 1 << 30) -> float:
    a = torch.empty(n_bytes // 4, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ev[0].record()
    for _ in range(20):
        b.copy_(a)
    ev[1].record()
    torch.cuda.synchronize()
    return 2 * n_bytes * 20 / (ev[0].elapsed_time(ev[1]) * 1e-3) / 1e9


def _time(step: Any, reps: int) -> tuple[float, float]:
    """(GPU ms per step, host us per step)."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    t0 = time.perf_counter()
    ev[0].record()
    for _ in range(reps):
        step()
    ev[1].record()
    host = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    return ev[0].elapsed_time(ev[1]) / reps, host


def probe(preset: str, gbs: float) -> list[dict[str, Any]]:
    cfg = mf.PRESETS[preset]
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = mf.TinyLlama(cfg, mf.SDPA)
    params = [p for p in model.parameters()]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-2
    n = sum(p.numel() for p in params)
    floor_ms = 7 * 4 * n / (gbs * 1e9) * 1e3
    reps = 20 if n > 1e8 else 100
    rows = []

    def add(name: str, opt: Any, **kw: Any) -> None:
        ms, host = _time(opt.step, reps)
        rows.append({"preset": preset, "params": n, "tensors": len(params), "variant": name, "gpu_ms": round(ms, 4),
                     "host_us": round(host, 1), "floor_ms": round(floor_ms, 4), "pct_of_copy": round(100 * floor_ms / ms, 1),
                     **kw})
        print(rows[-1], flush=True)
        opt.state.clear()  # each optimizer's m and v are 2 x 4 bytes a parameter: free them before the next

    add("torch foreach", torch.optim.AdamW(params, lr=1e-3))
    add("torch fused", torch.optim.AdamW(params, lr=1e-3, fused=True))
    default, tables = adamw.CHUNK_BLOCKS, adamw._Tables
    for block in (1024, 2048, 4096):
        for chunk_blocks in (1, 4, 8, 32):
            adamw.CHUNK_BLOCKS = chunk_blocks

            class Sized(tables):  # type: ignore[misc, valid-type]
                # Every launch's tables are built here (AdamW's plans and adamw_ alike): the block reaches both.
                def __init__(self, cols: Any, block: int | None = None, _b: int = block) -> None:
                    super().__init__(cols, _b)

            adamw._Tables = Sized  # type: ignore[misc]
            try:
                add(f"ours BLOCK={block} x{chunk_blocks}", adamw.AdamW(params, lr=1e-3), block=block,
                    chunk_blocks=chunk_blocks)
            finally:
                adamw._Tables = tables  # type: ignore[misc]
    adamw.CHUNK_BLOCKS = default
    # Correctness on the GPU: 3 steps of ours and of torch's foreach from the same state, fp32.
    ps = [torch.nn.Parameter(p.detach().clone()) for p in params]
    qs = [torch.nn.Parameter(p.detach().clone()) for p in params]
    o1, o2 = adamw.AdamW(ps, lr=1e-3), torch.optim.AdamW(qs, lr=1e-3)
    for _ in range(3):
        for p, q in zip(ps, qs):
            g = torch.randn_like(p)
            p.grad, q.grad = g, g.clone()
        o1.step()
        o2.step()
    err = max(float((p - q).abs().max() / q.abs().max().clamp_min(1e-30)) for p, q in zip(ps, qs))
    rows.append({"preset": preset, "variant": "max rel diff ours vs torch after 3 steps", "value": err})
    print(rows[-1], flush=True)
    del ps, qs, o1, o2
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="medium,tiny-llama")
    ap.add_argument("--json")
    a = ap.parse_args()
    gbs = _copy_gbs()
    print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}, copy {gbs:.0f} GB/s", flush=True)
    rows: list[dict[str, Any]] = []
    for preset in a.presets.split(","):
        rows += probe(preset, gbs)
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "copy_gbs": gbs,
                       "rows": rows}, fh, indent=1)
    print(f"\n{'preset':<11} {'variant':<26} {'GPU ms':>8} {'% copy':>7} {'host us':>8}")
    for r in rows:
        if "gpu_ms" in r:
            print(f"{r['preset']:<11} {r['variant']:<26} {r['gpu_ms']:>8.3f} {r['pct_of_copy']:>7.1f} {r['host_us']:>8.1f}")
        else:
            print(f"{r['preset']:<11} {r['variant']}: {r['value']:.3g}")


if __name__ == "__main__":
    main()
