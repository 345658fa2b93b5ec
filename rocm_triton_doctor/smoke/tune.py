"""`smoke --tune`: fill this device's autotune cache (kernels/tunecache.py) from the preset's cases, before they run.

For each case of a kernel whose module has `tune_candidates(key) -> list[config]`, the case is timed under the policy's
config and under each candidate (triton.testing.do_bench, L2 flushed, as the suite times), every candidate's output is
checked against the case's reference first (a wrong or failing config is never stored), and the fastest candidate is
stored when it beats the policy by more than TUNE_MARGIN. The suite then runs with the cache in use, so its table
shows the tuned speed. Only GPUs: the interpreter times Python, not kernels.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

TUNE_MARGIN = 0.97  # a candidate must take under 97 % of the policy's time: run-to-run noise is ~1-2 %


def candidates_for(kernel: str) -> Callable[[tuple[Any, ...]], list[dict[str, Any]]] | None:
    try:
        mod = importlib.import_module(f"rocm_triton_doctor.kernels.{kernel}")
    except ImportError:
        return None
    fn = getattr(mod, "tune_candidates", None)
    return fn if callable(fn) else None


def tune(cases: list[Any], dev: Any, target: Any, device_name: str, torch: Any,
         progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Tune every tunable case; returns {"path", "tuned": [rows], "notes"} for the report."""
    from rocm_triton_doctor.kernels import tunecache
    from rocm_triton_doctor.smoke import correctness, timing

    identity = tunecache.device_identity(device_name, target)
    path = tunecache.activate(identity)
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    todo = [c for c in cases if candidates_for(c.kernel) is not None]
    for i, case in enumerate(todo):
        if progress:
            progress(f"tuning {case.id}", i, len(todo))
        gen = torch.Generator(device=dev).manual_seed(i)
        inputs = case.setup(dev, gen)
        out = torch.empty(case.out_shape(inputs), dtype=case.dtype, device=dev)
        call = functools.partial(case.run, inputs, out)
        with tunecache.forced(case.kernel, None):
            call()
            key = tunecache.last_key(case.kernel)
            if key is None or (case.kernel, tunecache.key_text(key)) in seen:
                continue
            seen.add((case.kernel, tunecache.key_text(key)))
            policy_ms = timing.bench(call).median_ms
        best: tuple[float, dict[str, Any]] | None = None
        tried = 0
        for cfg in candidates_for(case.kernel)(key):  # type: ignore[misc]
            with tunecache.forced(case.kernel, cfg):
                try:
                    if not correctness.check_case(case, inputs, dev, tf32=False).ok:
                        continue
                    ms = timing.bench(call).median_ms
                except Exception:  # noqa: BLE001 - a candidate that cannot compile or run here is skipped
                    continue
            tried += 1
            if best is None or ms < best[0]:
                best = (ms, cfg)
        row = {"kernel": case.kernel, "case": case.name, "key": tunecache.key_text(key), "tried": tried,
               "policy_us": round(policy_ms * 1e3, 2)}
        if best is not None and best[0] < TUNE_MARGIN * policy_ms:
            tunecache.store(case.kernel, key, best[1], best[0] * 1e3, policy_ms * 1e3)
            row.update(tuned_us=round(best[0] * 1e3, 2), config=best[1])
        rows.append(row)
        torch.cuda.empty_cache()
    tunecache.save(identity)
    return {"path": str(path), "tuned": rows}
