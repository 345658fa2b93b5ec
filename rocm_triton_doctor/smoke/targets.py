"""The performance targets of issue #5, evaluated over one smoke run's results (a saved `--save` JSON or a live
report): which cases each target covers, the ratio it reads, the bound, and whether every covered case meets it.

`smoke --preset bench --compile` covers all of them in one run. The targets that are not about kernel timings
(`smoke` wall time, the AMD compile-only audit, `check` speed) are measured elsewhere (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocm_triton_doctor.check.findings import Finding

Result = dict[str, Any]

BIG = 256 * 2**20


@dataclass(frozen=True)
class PerfTarget:
    id: str
    text: str
    applies: Callable[[Result], bool]  # which cases of a covered kernel (KernelSpec.perf_targets names the target)
    value: Callable[[Result], float | None]
    bound: float
    unit: str = "x"


def _mem(r: Result) -> bool:
    return r["dtype"] in ("float32", "bfloat16") and r["bytes"] >= BIG


def _gemm(epilogue: str, dropout: bool) -> Callable[[Result], bool]:
    def applies(r: Result) -> bool:
        p = r.get("params") or {}
        return (r["dtype"] in ("float16", "bfloat16") and p.get("epilogue") == epilogue
                and (p.get("p", 0) > 0) == dropout and p.get("M") == p.get("N") == p.get("K")
                and p.get("M") in (4096, 8192))
    return applies


def _any_gemm(r: Result) -> bool:
    return any(f(r) for f in (_gemm("none", False), _gemm("bias_relu", False), _gemm("bias_relu", True)))


def _attention(r: Result) -> bool:
    p = r.get("params") or {}
    return r["dtype"] == "bfloat16" and p.get("S") == 4096 and p.get("D") == 128


def _covers(r: Result, target_id: str) -> bool:
    """Whether the result's kernel is one the target is about: its KernelSpec lists the target's id (perf_targets)."""
    from rocm_triton_doctor.kernels import spec_named

    spec = spec_named(r["kernel"])
    return spec is not None and target_id in spec.perf_targets


def _graph_ratio(r: Result) -> float | None:
    t, e = r.get("triton_graph_us"), r.get("eager_graph_us")
    return e / t if t and e else None


TARGETS = (
    PerfTarget("mem-copy", "memory-bound kernels, >= 256 MiB, fp32 and bf16: % of the measured copy bandwidth", _mem,
               lambda r: r.get("pct_ceiling"), 90.0, "%"),
    PerfTarget("mem-compile", "memory-bound kernels, >= 256 MiB: x torch.compile", _mem,
               lambda r: r.get("speedup_compile"), 1.0),
    # Covers the kernels whose eager torch version moves at least twice the fused kernel's bytes (their specs name it):
    # RMSNorm (pow, mean, rsqrt, two muls) and bias+GELU+dropout+residual (add, GELU, mask, scale, add). Eager add-mul
    # moves 6 bytes per 4 fused (<= 1.5x possible), SwiGLU 5 per 3 (<= 1.67x); eager softmax and LayerNorm are single
    # ATen kernels.
    PerfTarget("mem-eager", "memory-bound kernels whose eager form moves >= 2x the bytes: x eager", _mem,
               lambda r: r.get("speedup_eager"), 2.0),
    PerfTarget("gemm-plain", "GEMM fp16/bf16 4096^3 and 8192^3: x torch.matmul", _gemm("none", False),
               lambda r: r.get("speedup_eager"), 0.90),
    PerfTarget("gemm-bias-relu", "GEMM+bias+ReLU: x eager (matmul, then bias and ReLU)", _gemm("bias_relu", False),
               lambda r: r.get("speedup_eager"), 1.10),
    PerfTarget("gemm-dropout", "GEMM+bias+ReLU+dropout: x eager", _gemm("bias_relu", True),
               lambda r: r.get("speedup_eager"), 1.25),
    PerfTarget("gemm-compile", "each GEMM above: x torch.compile", _any_gemm, lambda r: r.get("speedup_compile"), 1.0),
    PerfTarget("seed-graph", "GEMM seed shapes: eager / Triton, CUDA/HIP-graph replay (launch-bound)",
               lambda r: bool(r.get("seed_shape")), _graph_ratio, 1.0),
    PerfTarget("attention", "attention bf16 S=4096 D=128, causal and not: x scaled_dot_product_attention", _attention,
               lambda r: r.get("speedup_eager"), 0.80),
)


def evaluate(results: list[Result]) -> list[dict[str, Any]]:
    """One row per target that covers at least one case of this run: each covered case's value, and the verdict
    (met / not met / not measured — a covered case that failed or has no such ratio, e.g. no --compile)."""
    rows = []
    for t in TARGETS:
        covered = [r for r in results if _covers(r, t.id) and t.applies(r)]
        if not covered:
            continue
        cases = []
        for r in covered:
            v = t.value(r) if r.get("status") == "pass" else None
            cases.append({"case": f"{r['kernel']}[{r['case']}]", "value": v,
                          "ok": None if v is None else v >= t.bound})
        oks = [c["ok"] for c in cases]
        status = "not measured" if None in oks else ("met" if all(oks) else "not met")
        values = [c["value"] for c in cases if c["value"] is not None]
        rows.append({"id": t.id, "target": t.text, "bound": t.bound, "unit": t.unit, "status": status,
                     "min": min(values) if values else None, "max": max(values) if values else None, "cases": cases})
    return rows


def findings(rows: list[dict[str, Any]]) -> tuple[Finding, ...]:
    """Each evaluated target as a finding `perf-target-<id>`: met = ok, not met = warn (a performance target is not a
    wrong result: the exit code stays the correctness verdict), not measured = info."""
    from rocm_triton_doctor.check.findings import Finding, Severity

    sev = {"met": Severity.OK, "not met": Severity.WARN}
    out = []
    for row in rows:
        span = "" if row["min"] is None else (f" (min {row['min']:.3g}{row['unit']}" +
                                             ("" if row["max"] == row["min"] else f", max {row['max']:.3g}{row['unit']}")
                                             + f"; bound {row['bound']:g}{row['unit']})")
        out.append(Finding(f"perf-target-{row['id']}", sev.get(row["status"], Severity.INFO),
                           f"{row['target']}: {row['status']}{span}", group="performance",
                           evidence=tuple(c["case"] for c in row["cases"])))
    return tuple(out)
