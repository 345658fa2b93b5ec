"""Host-inclusive time per call of softmax/RMSNorm over few wide rows: the split form (rows_split.py, two launches)
against one program per row and eager torch, as a Python loop calls them back to back without graphs: the wall time
of 2000 calls, synchronised once at the end (the steady-state cost a decode loop pays), and the median of 200 calls
each synchronised (one call's latency).

    PYTHONPATH=. python benchmarks/split_host_probe.py
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

from rocm_triton_doctor.kernels import policy, rmsnorm, rows, softmax

SHAPES = [(1, 152064, torch.bfloat16), (1, 32000, torch.float32), (8, 50257, torch.bfloat16), (32, 65536, torch.float32),
          (6, 288582, torch.float16)]


def per_call(fn, n: int = 2000) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    loop = (time.perf_counter() - t) / n * 1e6
    lat = []
    for _ in range(200):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        lat.append((time.perf_counter() - t) * 1e6)
    return loop, statistics.median(lat)


def main() -> int:
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(0))
    for M, N, dt in SHAPES:
        x = torch.randn(M, N, device=dev, dtype=dt)
        w = torch.randn(N, device=dev, dtype=dt)
        cfg = rows._config(rows.target_of(x), N, dt.itemsize, policy.row_class(N, M))
        one = {"BLOCK": cfg["BLOCK"], "ROWS": 1, "num_warps": cfg["num_warps"], "SPLIT": 1}
        for name, ours, eager in (("softmax", lambda c: softmax.softmax(x, config=c), lambda: torch.softmax(x, -1)),
                                  ("rmsnorm", lambda c: rmsnorm.rmsnorm(x, w, config=c), lambda: rmsnorm.eager(x, w))):
            res = {"eager": per_call(eager), "one": per_call(lambda: ours(one)), "auto": per_call(lambda: ours(None))}
            print(f"{name} {str(dt)[6:]} {M}x{N}: us/call in a loop (sync'd latency) "
                  + " ".join(f"{k} {a:.1f} ({b:.1f})" for k, (a, b) in res.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
