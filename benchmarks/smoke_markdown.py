"""Render a saved `smoke --save FILE` result as a Markdown table (for docs/performance.md).

Usage: python benchmarks/smoke_markdown.py FILE.json
"""

from __future__ import annotations

import json
import sys

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


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        data = json.load(fh)
    print(render_aot(data) if data.get("schema") == "rocm-triton-doctor/smoke-aot/1" else render(data))
