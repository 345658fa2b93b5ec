"""Timing on a GPU, and the device's own ceilings measured in the same run (kernels.md §6–§7.3).

Medians of triton.testing.do_bench (per-iteration events, L2 flushed before each iteration) with p20/p80. Ceilings:
device-to-device copy bandwidth (bytes read + written) and a large torch.matmul per dtype. Every %-of-ceiling figure
divides by a ceiling measured in this run on this device, never by a datasheet number.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import torch

QUANTILES = [0.5, 0.2, 0.8]


@dataclass
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float

    def to_dict(self) -> dict[str, float]:
        return {"median_ms": self.median_ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms}


def bench(fn: Callable[[], Any], rep_ms: int = 100, warmup_ms: int = 25) -> Timing:
    """do_bench's warm-up and rep are in ms (it runs as many iterations as fit), so big rows get fewer reps."""
    from triton.testing import do_bench

    med, p20, p80 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=QUANTILES)
    return Timing(float(med), float(p20), float(p80))


def bench_graph(fn: Callable[[], Any]) -> float | None:
    """Graph-replay time per call (CUDA graphs / hipGraph): launch overhead removed; None if capture fails."""
    from triton.testing import do_bench_cudagraph

    try:
        return float(do_bench_cudagraph(fn, rep=10))
    except Exception:  # noqa: BLE001 - some kernels/stacks cannot be captured; the report says n/a
        return None


@dataclass
class Ceilings:
    copy_gbps: float
    matmul_tflops: dict[str, float]  # dtype name -> TFLOP/s ("float32" measured with TF32 off: IEEE)

    def to_dict(self) -> dict[str, Any]:
        return {"copy_gbps": round(self.copy_gbps, 1), "matmul_tflops": {k: round(v, 1) for k, v in self.matmul_tflops.items()}}


def _copy_gbps(device: torch.device, size_mib: int) -> float:
    """Device-to-device copy of size_mib MiB, counting bytes read + written."""
    src = torch.empty(size_mib * 2**20 // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    t = bench(functools.partial(dst.copy_, src))
    return 2 * src.numel() * 4 / (t.median_ms * 1e-3) / 1e9


def measure_ceilings(device: torch.device, size_mib: int = 512, n: int = 8192) -> Ceilings:
    copy = _copy_gbps(device, size_mib)
    tflops: dict[str, float] = {}
    gen = torch.Generator(device=device).manual_seed(0)
    for dtype, size in ((torch.bfloat16, n), (torch.float16, n), (torch.float32, n // 2)):
        a = torch.randn(size, size, device=device, dtype=dtype, generator=gen)
        b = torch.randn(size, size, device=device, dtype=dtype, generator=gen)
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            tm = bench(functools.partial(torch.matmul, a, b))
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old
        tflops[str(dtype).replace("torch.", "")] = 2 * size**3 / (tm.median_ms * 1e-3) / 1e12
        del a, b
    torch.cuda.empty_cache()
    return Ceilings(copy, tflops)


def read_clocks(backend: str) -> dict[str, str]:
    """Current clocks as the vendor tool reports them (informational: clocks move with load and temperature)."""
    if backend == "cuda":
        argv = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw", "--format=csv,noheader"]
    else:
        argv = ["amd-smi", "metric", "--clock", "--csv"]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    line = res.stdout.strip().splitlines()[0] if res.returncode == 0 and res.stdout.strip() else ""
    return {"tool": argv[0], "reading": line} if line else {}


# -- judging a time: launch-bound or not, against the ceilings measured in the same run --------------------------

LAUNCH_BOUND_US = 10.0  # below this a GPU kernel's time is mostly launch overhead (kernels.md §6.3)


def launch_bound(median_ms: float, roof_us: float | None, graph_us: float | None = None) -> bool:
    """Launch-bound: the kernel measured under LAUNCH_BOUND_US; or its roofline time (roofline_us) is under it; or
    graph replay (no launch overhead) ran it in under 2/3 of the event-timed median. A 64x256x128 GEMM needs ~0.01 us
    of tensor-core time on an H200, so whatever its event-timed median says (launches dominate, and vary run to
    run), only graph replay compares it fairly."""
    if median_ms * 1e3 < LAUNCH_BOUND_US:
        return True
    if graph_us is not None and graph_us < median_ms * 1e3 * 2 / 3:
        return True
    return roof_us is not None and roof_us < LAUNCH_BOUND_US


def roofline_us(case: Any, ceilings: Any, dtype: str) -> float | None:
    """The case's time at the ceilings measured in this run: bytes at the copy bandwidth, and for GEMM and attention
    FLOPs at the matmul rate, whichever is longer (None without ceilings)."""
    roof_s = case.bytes / (ceilings.copy_gbps * 1e9) if ceilings.copy_gbps else 0.0
    tflops = ceilings.matmul_tflops.get(dtype) if compute_bound(case.kernel) else None
    if tflops:
        roof_s = max(roof_s, case.flops / (tflops * 1e12))
    return roof_s * 1e6 if roof_s else None


def compute_bound(kernel: str) -> bool:
    """Judged by FLOPs against the matmul rate (the kernel's spec says so); everything else by bytes against copy."""
    from rocm_triton_doctor.kernels import spec_named

    spec = spec_named(kernel)
    return spec is not None and spec.bound == "compute"
