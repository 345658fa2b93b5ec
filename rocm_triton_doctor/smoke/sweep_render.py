"""The sweep's (and the launch preset's) human output: rows grouped by class, then a per-class summary; the issue #16
targets each row misses; a per-class ratio plot. Works on result dicts, so benchmarks/smoke_markdown.py reuses it."""

from __future__ import annotations

import statistics
from typing import Any

MEM_COPY_PCT = 85.0  # memory-bound rows from 64 MiB up: >= 85 % of copy bandwidth (issue #16 targets)
MEM_COPY_FROM = 64 << 20
MEM_BEST = 0.95  # memory-bound rows, every size: >= 0.95x the best of eager / torch.compile / Liger
ATTN_SDPA, ATTN_FROM_S = 0.9, 1000  # attention >= 0.9x SDPA for S >= 1000
GEMM_CUBLAS, GEMM_FUSED = 0.95, 1.1  # GEMM >= 0.95x cuBLAS; fused epilogues >= 1.1x eager


def row_class(r: dict[str, Any]) -> str:
    """The class a row is judged in: the kernel, GEMM split by shape kind, attention by GQA."""
    k, p = r["kernel"], r.get("params") or {}
    if k == "gemm" and p:
        M, N, K = p["M"], p["N"], p["K"]
        if p.get("epilogue", "none") != "none":
            return "gemm fused epilogue"
        if M <= 16:
            return "gemm decode (M<=16)"
        if min(M, N, K) <= 128:
            return "gemm skinny / short K"
        if M == N == K and M & (M - 1) == 0:
            return "gemm square"
        if any(d % 128 for d in (M, N, K)):
            return "gemm odd"
        return "gemm projection"
    if k == "attention" and p.get("H_kv", p.get("H")) != p.get("H"):
        return "attention GQA"
    return str(k)


def baseline_name(r: dict[str, Any]) -> str:
    return {"gemm": "cuBLAS", "attention": "SDPA"}.get(r["kernel"], "eager")


def ratio(r: dict[str, Any]) -> float | None:
    """The ratio a row is judged by: GEMM/attention over cuBLAS/SDPA (their eager); memory-bound kernels over the
    best of eager / torch.compile / Liger (vs_best), or eager alone when that is all that was timed."""
    if r["kernel"] in ("gemm", "attention"):
        return r.get("speedup_eager")
    return r.get("vs_best") if r.get("vs_best") is not None else r.get("speedup_eager")


def misses(r: dict[str, Any]) -> list[str]:
    """The issue #16 targets this row misses (empty when it meets them or was not timed)."""
    x, p, out = ratio(r), r.get("params") or {}, []
    if r.get("status") != "pass":
        return [r.get("status", "?")]
    if x is None:
        return []
    if r["kernel"] == "gemm":
        fused = p.get("epilogue", "none") != "none"
        bound = GEMM_FUSED if fused else GEMM_CUBLAS
        if x < bound:
            out.append(f"<{bound}x {'eager' if fused else 'cuBLAS'}")
    elif r["kernel"] == "attention":
        if p.get("S", 0) >= ATTN_FROM_S and x < ATTN_SDPA:
            out.append(f"<{ATTN_SDPA}x SDPA")
    else:
        if x < MEM_BEST:
            out.append(f"<{MEM_BEST}x best")
        pct = r.get("pct_ceiling")
        if r.get("bytes", 0) >= MEM_COPY_FROM and pct is not None and pct < MEM_COPY_PCT:
            out.append(f"<{MEM_COPY_PCT:.0f}% copy")
    return out


def summary(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per class: rows, worst row and ratio, median ratio, median and worst % of ceiling, rows missing a target."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by.setdefault(row_class(r), []).append(r)
    out = []
    for cls, rows in by.items():
        timed = [r for r in rows if ratio(r) is not None]
        worst = min(timed, key=lambda r: ratio(r) or 0.0) if timed else None
        pcts = [r["pct_ceiling"] for r in rows if r.get("pct_ceiling") is not None]
        out.append({"class": cls, "rows": len(rows), "worst_case": worst["case"] if worst else None,
                    "worst_ratio": ratio(worst) if worst else None,
                    "median_ratio": round(statistics.median([ratio(r) or 0.0 for r in timed]), 3) if timed else None,
                    "median_pct": round(statistics.median(pcts), 1) if pcts else None,
                    "worst_pct": min(pcts) if pcts else None, "missed": sum(bool(misses(r)) for r in rows),
                    "against": "eager" if cls == "gemm fused epilogue" else
                    baseline_name(rows[0]) if rows[0]["kernel"] in ("gemm", "attention") else "best"})
    return out


def _x(v: float | None) -> str:
    return f"{v:.2f}" if v is not None else "—"


def _us(t: dict[str, float] | None) -> str:
    return f"{t['median_ms'] * 1e3:,.1f}" if t else "—"


def table(report: Any, console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    results = [r.to_dict() for r in report.results]
    if report.preset == "launch":
        return launch_table(report, results, console)
    by: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by.setdefault(row_class(r), []).append(r)
    for cls, rows in by.items():
        t = Table(title=f"{cls} — {len(rows)} rows", title_justify="left", pad_edge=False, show_edge=False)
        for col in ("case", "ok", "ours µs", "× eager", "× compile", "× Liger", "× best", "% ceil", "misses"):
            t.add_column(col, justify="left" if col in ("case", "misses") else "right")
        for r in rows:
            liger = _x(r.get("speedup_liger")) if r.get("speedup_liger") is not None else (r.get("liger") or "—")
            miss = misses(r)
            t.add_row(r["case"], Text(r["status"], style="green" if r["status"] == "pass" else "bold red"),
                      _us(r.get("triton_ms")), _x(r.get("speedup_eager")), _x(r.get("speedup_compile")), liger,
                      _x(r.get("vs_best")), f"{r['pct_ceiling']:.0f}%" if r.get("pct_ceiling") is not None else "—",
                      Text(", ".join(miss) or "", style="red"))
        console.print(t)
    for n in report.notes:
        console.print(Text(n, style="dim"))
    if report.ceilings:
        c = report.ceilings
        console.print(Text(f"Ceilings: copy {c['copy_gbps']} GB/s; torch.matmul {c['matmul_tflops']} TFLOP/s", style="dim"))
    s = Table(title=f"sweep summary by class — {report.device_name}", title_justify="left", pad_edge=False)
    for col in ("class", "rows", "against", "worst ×", "worst row", "median ×", "median % ceil", "worst % ceil",
                "rows missing a target"):
        s.add_column(col, justify="left" if col in ("class", "worst row", "against") else "right")
    for row in summary(results):
        s.add_row(row["class"], str(row["rows"]), row["against"], _x(row["worst_ratio"]), row["worst_case"] or "—",
                  _x(row["median_ratio"]), _pct(row["median_pct"]), _pct(row["worst_pct"]),
                  Text(str(row["missed"]), style="red" if row["missed"] else "green"))
    console.print(s)
    console.print(Text(f"Smoke {report.status.upper()}: {len(results)} rows in {report.seconds:.1f} s "
                       f"(exit {report.exit_code})", style="bold green" if report.exit_code == 0 else "bold red"))


def _pct(v: float | None) -> str:
    return f"{v:.0f}%" if v is not None else "—"


def launch_table(report: Any, results: list[dict[str, Any]], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"host µs per call, back to back, no graphs — {report.device_name}", title_justify="left")
    for col in ("kernel", "case", "ok", "ours µs", "eager µs", "ours / eager"):
        t.add_column(col, justify="left" if col in ("kernel", "case") else "right")
    for r in results:
        lu = r.get("launch_us") or {}
        ours, eager = lu.get("triton"), lu.get("eager")
        t.add_row(r["kernel"], r["case"], r["status"], _x(ours), _x(eager),
                  _x(ours / eager) if ours and eager else "—")
    console.print(t)
    for n in report.notes:
        console.print(Text(n, style="dim"))


def plot(report: Any, path: str) -> None:
    """One panel per class: each row's ratio (the class's judging ratio) with the target line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = [r.to_dict() for r in report.results]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if ratio(r) is not None:
            by.setdefault(row_class(r), []).append(r)
    if not by:
        raise ValueError("--plot needs GPU timings (there are none on --device cpu)")
    fig, axes = plt.subplots(len(by), 1, figsize=(12, max(4, 0.18 * len(results) + 1.5 * len(by))), squeeze=False)
    for ax, (cls, rows) in zip(axes[:, 0], by.items()):
        ax.barh([r["case"] for r in rows], [ratio(r) or 0.0 for r in rows], color="tab:blue")
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_title(f"{cls}: × {'SDPA' if 'attention' in cls else 'cuBLAS' if 'gemm' in cls else 'best baseline'}",
                     fontsize=9, loc="left")
        ax.tick_params(axis="y", labelsize=6)
        ax.invert_yaxis()
    fig.suptitle(f"{report.device_name} — smoke sweep")
    from rocm_triton_doctor.smoke.render import save_png

    save_png(fig, path, dpi=110)
