"""Render a saved `smoke --save FILE` result as Markdown tables (for docs/performance.md).

Usage: python benchmarks/smoke_markdown.py FILE.json [--before EARLIER.json]
A sweep (`--preset sweep`) becomes a per-class summary (worst row, and with --before the worst row of an earlier
sweep of the same grid) and one table per class, rows that miss an issue #16 target flagged; `--preset launch` a
host-µs table; anything else the one results table.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rocm_triton_doctor.smoke import sweep_render as sr
from rocm_triton_doctor.smoke import targets
from rocm_triton_doctor.smoke.render import target_range


def fmt_us(ms: float | None) -> str:
    return f"{ms * 1e3:,.1f}" if ms is not None else "—"


def render(d: dict) -> str:
    c = d["ceilings"] or {}
    mm = ", ".join(f"{k} {v}" for k, v in (c.get("matmul_tflops") or {}).items())
    lines = [(f"Device: {d['device_name']} ({d['target']}); torch {d['versions']['torch']}, Triton {d['versions']['triton']}; "
             f"started {d['started']}; {d['counts']} in {d['seconds']} s."),
             f"Ceilings measured in the same run: copy {c.get('copy_gbps')} GB/s; torch.matmul TFLOP/s: {mm}.", "",
             ("| kernel | case | result | max abs err (atol) | Triton µs p50 (p20–p80) | eager µs | × eager | × compile | "
             "achieved | % ceiling | graph µs Triton / eager |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in d["results"]:
        t = r["triton_ms"]
        lines.append(
            f"| {r['kernel']} | {r['case']}{' (seed)' if r['seed_shape'] else ''} | {r['status']} | "
            f"{r['max_abs']:.2g} ({r['atol']:.0e}) | "
            f"{fmt_us(t['median_ms'])} ({fmt_us(t['p20_ms'])}–{fmt_us(t['p80_ms'])}) | "
            f"{fmt_us(r['eager_ms']['median_ms']) if r['eager_ms'] else '—'} | "
            f"{r['speedup_eager'] if r['speedup_eager'] is not None else '—'} | "
            f"{r['speedup_compile'] if r['speedup_compile'] is not None else '—'} | "
            f"{r['achieved']:,} {r['achieved_unit']} | {r['pct_ceiling']}%{' launch-bound' if r['launch_bound'] else ''} | "
            f"{r['triton_graph_us'] if r['triton_graph_us'] is not None else '—'} / "
            f"{r['eager_graph_us'] if r['eager_graph_us'] is not None else '—'} |")
    # Re-evaluated with the current definitions (smoke/targets.py), whatever the run saved.
    rows = targets.evaluate(d["results"]) if d.get("ceilings") and d.get("preset") == "bench" else []
    if rows:
        lines += ["", "Performance targets (issue #5) over this run, evaluated by `rocm_triton_doctor/smoke/targets.py`:", "",
                  "| target | cases | measured (lowest–highest) | bound | status |", "|---|---|---|---|---|"]
        for row in rows:
            lines.append(f"| {row['target']} | {len(row['cases'])} | {target_range(row)} | {row['bound']:g}{row['unit']} | "
                         f"{row['status']} |")
    return "\n".join(lines)


def render_aot(d: dict) -> str:
    lines = [f"Triton {d['triton']}, compiled without a GPU for: {', '.join(d['targets'])}.", "",
             "| kernel | target | result | VGPR/SGPR/AGPR (AMD) or registers (NVIDIA) | spills | LDS/shared bytes | occupancy |",
             "|---|---|---|---|---|---|---|"]
    for r in d["results"]:
        regs = (f"{r['vgpr']}/{r['sgpr']}/{r['agpr'] or 0}" if r["vgpr"] is not None
                else (str(r["registers"]) if r["registers"] is not None else "—"))
        result = "compiled" if r["ok"] else f"FAILED: {r['error']}"
        lines.append(f"| {r['kernel']} | {r['target']} | {result} | {regs} | "
                     f"{r['spills'] if r['spills'] is not None else '—'} | "
                     f"{r['shared_bytes'] if r['shared_bytes'] is not None else '—'} | {r['occupancy'] or '—'} |")
    lines += [""] + [f"- {f['severity']}: {f['title']}" for f in d["findings"]]
    return "\n".join(lines)


def _x(v: float | None) -> str:
    return f"{v:.2f}×" if v is not None else "—"


def _header(d: dict) -> list[str]:
    c = d.get("ceilings") or {}
    return [(f"Device: {d['device_name']} ({d['target']}); torch {d['versions']['torch']}, Triton {d['versions']['triton']}; "
            f"`smoke --preset {d['preset']}`, started {d['started']}, {len(d['results'])} rows in {d['seconds']} s. "
            f"Ceilings measured in the same run: copy {c.get('copy_gbps')} GB/s; torch.matmul TFLOP/s: "
            f"{c.get('matmul_tflops')}."), ""]


def render_sweep(d: dict, before: dict | None = None) -> str:
    """Per class: the worst row (before/after when an earlier sweep is given), then each row's ratios."""
    old = {s["class"]: s for s in sr.summary(before["results"])} if before else {}
    lines = _header(d) + ["| class | rows | judged against | worst row | worst × | median × | median % ceiling | "
                          "rows missing a target |" + (" worst before |" if before else ""),
                          "|---|---|---|---|---|---|---|---|" + ("---|" if before else "")]
    for s in sr.summary(d["results"]):
        b = old.get(s["class"])
        prev = (f" {b['worst_case']} {_x(b['worst_ratio'])} |" if b else " — |") if before else ""
        lines.append(f"| {s['class']} | {s['rows']} | {s['against']} | {s['worst_case'] or '—'} | {_x(s['worst_ratio'])} | "
                     f"{_x(s['median_ratio'])} | {s['median_pct'] if s['median_pct'] is not None else '—'}% | "
                     f"{s['missed']} |{prev}")
    by: dict[str, list[dict[str, Any]]] = {}
    for r in d["results"]:
        by.setdefault(sr.row_class(r), []).append(r)
    for cls, rows in by.items():
        lines += ["", f"**{cls}**", "", ("| case | result | ours µs | × eager | × compile | × Liger | × SDPA/cuBLAS | "
                  "% ceiling | misses |"), "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            vendor = r["kernel"] in ("gemm", "attention") and (r.get("params") or {}).get("epilogue", "none") == "none"
            liger = _x(r.get("speedup_liger")) if r.get("speedup_liger") is not None else (r.get("liger") or "—")
            miss = ", ".join(sr.misses(r))
            lines.append(f"| {r['case']} | {r['status']} | {fmt_us((r.get('triton_ms') or {}).get('median_ms'))} | "
                         f"{'—' if vendor else _x(r.get('speedup_eager'))} | {_x(r.get('speedup_compile'))} | {liger} | "
                         f"{_x(r.get('speedup_eager')) if vendor else '—'} | "
                         f"{r['pct_ceiling'] if r.get('pct_ceiling') is not None else '—'}% | "
                         f"{'**' + miss + '**' if miss else ''} |")
    skipped = [n for n in d.get("notes", []) if n.startswith(("not in the sweep", "--max-seconds"))]
    if skipped:
        lines += ["", *[f"- {n}" for n in skipped]]
    return "\n".join(lines)


def render_launch(d: dict) -> str:
    lines = _header(d) + ["| kernel | case | host µs per call, ours | eager | ours / eager |", "|---|---|---|---|---|"]
    for r in d["results"]:
        lu = r.get("launch_us") or {}
        ours, eager = lu.get("triton"), lu.get("eager")
        lines.append(f"| {r['kernel']} | {r['case']} | {ours if ours is not None else '—'} | "
                     f"{eager if eager is not None else '—'} | {_x(ours / eager) if ours and eager else '—'} |")
    return "\n".join(lines)


def main(argv: list[str]) -> str:
    with open(argv[0]) as fh:
        data = json.load(fh)
    before = None
    if "--before" in argv:
        with open(argv[argv.index("--before") + 1]) as fh:
            before = json.load(fh)
    if data.get("schema") == "rocm-triton-doctor/smoke-aot/1":
        return render_aot(data)
    if data.get("preset") == "sweep":
        return render_sweep(data, before)
    if data.get("preset") == "launch":
        return render_launch(data)
    return render(data)


if __name__ == "__main__":
    print(main(sys.argv[1:]))
