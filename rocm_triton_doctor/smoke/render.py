"""Smoke output: a results table (rich), JUnit XML for CI systems, and an optional matplotlib plot."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from rocm_triton_doctor.result import Result
from rocm_triton_doctor.smoke.aot import AotResult
from rocm_triton_doctor.smoke.report import SmokeReport

STATUS_STYLE = {"pass": "green", "fail": "bold red", "error": "bold red", "oom": "yellow"}


TARGET_STYLE = {"met": "green", "not met": "bold red", "not measured": "yellow"}


def target_range(row: dict[str, Any]) -> str:
    """'0.96–1.36x' (lowest–highest over the target's cases) or '—'."""
    lo, hi, unit = row["min"], row["max"], row["unit"]
    if lo is None:
        return "—"
    return f"{lo:.3g}{unit}" if lo == hi else f"{lo:.3g}–{hi:.3g}{unit}"


def _us(ms: float | None) -> str:
    return f"{ms * 1e3:,.1f}" if ms is not None else "—"


def error_vs_tolerance(r: Any) -> str:
    """The `max err / tol` cell. A case passes when |out - ref| <= atol + rtol·|ref| everywhere (smoke/correctness.py),
    so its largest absolute error may exceed atol alone: "0.03 / 2e-02 PASS" read as a pass above its tolerance
    (newcomer-walk.md defect 15). A passing row shows the bound that holds: absolute error / atol, else relative
    error / rtol ("rel"), else the combined bound spelled out. Both sides are rounded the same way (2 significant
    digits), so the shown error is never above the shown tolerance."""
    if r.max_abs is None or r.atol is None:
        return ""
    if r.status != "pass" or r.max_abs <= r.atol:
        return f"{r.max_abs:.2g} / {r.atol:.2g}"
    if r.max_rel is not None and r.rtol is not None and r.max_rel <= r.rtol:
        return f"{r.max_rel:.2g} / {r.rtol:.2g} rel"
    return f"{r.max_abs:.2g} ≤ {r.atol:.2g}+{r.rtol or 0:.2g}·|ref|"


def table(report: SmokeReport, console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    if report.preset in ("sweep", "launch"):  # ~300 rows: grouped by class, then a per-class summary
        from rocm_triton_doctor.smoke import sweep_render

        return sweep_render.table(report, console)
    gpu = report.ceilings is not None
    # "CPU (Triton interpreter) (interpreter (CPU))" said the same thing twice (defect 19): the target only when it adds.
    where = report.device_name if "interpreter" in report.device_name else f"{report.device_name} ({report.target})"
    t = Table(title=f"smoke {report.preset} — {where}", title_justify="left",
              show_lines=False, pad_edge=False)
    t.add_column("kernel")
    t.add_column("case")
    t.add_column("result")
    t.add_column("max err / tol", justify="right")
    if gpu:
        for col in ("triton µs (p20–p80)", "eager µs", "× eager"):
            t.add_column(col, justify="right")
        if any(r.compile_ms for r in report.results):
            t.add_column("× compile", justify="right")
        t.add_column("achieved", justify="right")
        t.add_column("% ceiling", justify="right")
        t.add_column("graph µs T/E", justify="right")
    for r in report.results:
        status = Text(r.status.upper(), style=STATUS_STYLE.get(r.status, ""))
        err = error_vs_tolerance(r)
        if r.error:
            err = r.error[:60]
        row: list[Any] = [r.kernel, r.case + (" *" if r.seed_shape else ""), status, err]
        if gpu:
            tm = r.triton_ms
            row += [f"{_us(tm['median_ms'])} ({_us(tm['p20_ms'])}–{_us(tm['p80_ms'])})" if tm else "—",
                    _us(r.eager_ms["median_ms"]) if r.eager_ms else "—",
                    f"{r.speedup_eager:.2f}" if r.speedup_eager else "—"]
            if any(x.compile_ms for x in report.results):
                row.append(f"{r.speedup_compile:.2f}" if r.speedup_compile else "—")
            row += [f"{r.achieved:,} {r.achieved_unit}" if r.achieved is not None else "—",
                    (f"{r.pct_ceiling:.0f}%" + (" (launch-bound)" if r.launch_bound else "")) if r.pct_ceiling else "—",
                    (f"{r.triton_graph_us or '—'}/{r.eager_graph_us or '—'}" if (r.triton_graph_us or r.eager_graph_us)
                     else "—")]
        t.add_row(*row)
    console.print(t)
    for r in report.results:
        for p in r.problems:
            console.print(Text(f"  {r.id}: {p}", style="red"))
        if r.dropout:
            d = r.dropout
            console.print(Text(f"  {r.id}: dropout p={d['p']} keep-rate {d['keep_rate']:.4f} (z={d['z']}), "
                               f"other-seed mask agreement {d['other_seed_agreement']}", style="dim"))
    if report.ceilings:
        c = report.ceilings
        mm = ", ".join(f"{k} {v} TFLOP/s" for k, v in c["matmul_tflops"].items())
        console.print(Text(f"Ceilings measured in this run: copy {c['copy_gbps']} GB/s; torch.matmul {mm}", style="dim"))
    if report.clocks:
        console.print(Text(f"Clocks ({report.clocks['tool']}): {report.clocks['reading']}", style="dim"))
    for n in report.notes:
        console.print(Text(n, style="dim"))
    if any(r.seed_shape for r in report.results):
        console.print(Text("* a published seed shape", style="dim"))
    target_rows = report.targets()
    if target_rows:
        tt = Table(title="performance targets (issue #5) over this run", title_justify="left", pad_edge=False)
        for col in ("target", "cases", "measured", "bound", "status"):
            tt.add_column(col, justify="right" if col in ("cases", "measured", "bound") else "left")
        for tr in target_rows:
            tt.add_row(tr["target"], str(len(tr["cases"])), target_range(tr), f"{tr['bound']:g}{tr['unit']}",
                       Text(tr["status"], style=TARGET_STYLE[tr["status"]]))
        console.print(tt)
    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    style = "bold green" if report.exit_code == 0 else "bold red"
    console.print(Text(f"Smoke {report.status.upper()}: {summary} in {report.seconds:.1f} s "
                       f"(exit {report.exit_code})", style=style))


def junit(report: SmokeReport, path: str) -> None:
    suite = ET.Element("testsuite", name=f"rocm-triton-doctor smoke {report.preset}", tests=str(len(report.results)),
                       failures=str(sum(r.status == "fail" for r in report.results)),
                       errors=str(sum(r.status in ("error", "oom") for r in report.results)),
                       time=f"{report.seconds:.3f}")
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="device", value=report.device_name)
    for r in report.results:
        tc = ET.SubElement(suite, "testcase", classname=f"smoke.{r.kernel}", name=r.case, time=f"{r.seconds:.3f}")
        if r.status == "fail":
            ET.SubElement(tc, "failure", message="; ".join(r.problems)[:1000]).text = "\n".join(r.problems)
        elif r.status in ("error", "oom"):
            ET.SubElement(tc, "error", message=r.error or r.status).text = r.error or ""
    from rocm_triton_doctor import outputs

    outputs.write_bytes(path, ET.tostring(suite, encoding="utf-8", xml_declaration=True))


def plot(report: SmokeReport, path: str) -> None:
    """Per case: speed-up over torch eager and % of the device ceiling (needs the `plot` extra: matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install 'rocm-triton-doctor[plot]'") from None
    if report.preset == "sweep":
        from rocm_triton_doctor.smoke import sweep_render

        return sweep_render.plot(report, path)
    rows = [r for r in report.results if r.speedup_eager is not None]
    if not rows:
        raise ValueError("--plot needs GPU timings (there are none on --device cpu)")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, max(3, 0.35 * len(rows))), sharey=True)
    labels = [f"{r.kernel} {r.case}" for r in rows]
    ax1.barh(labels, [r.speedup_eager for r in rows], color="tab:blue")
    ax1.axvline(1.0, color="k", lw=0.8)
    ax1.set_xlabel("speed-up over torch eager (×)")
    ax2.barh(labels, [r.pct_ceiling or 0 for r in rows], color="tab:green")
    ax2.set_xlabel("% of the measured device ceiling")
    ax1.invert_yaxis()
    fig.suptitle(f"{report.device_name} — smoke {report.preset}")
    save_png(fig, path, dpi=120)


def save_png(fig: Any, path: str, dpi: int) -> None:
    """Render a matplotlib figure to PNG in memory, close it, and write it through outputs.py (atomic for a regular
    file, written through for a device node/FIFO/symlink): every smoke plot."""
    import io

    import matplotlib.pyplot as plt

    from rocm_triton_doctor import outputs

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    outputs.write_bytes(path, buf.getvalue())


def aot_table(results: list[AotResult], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(title="compile-only audit (no GPU used)", title_justify="left")
    for col in ("kernel", "target", "result", "VGPR/SGPR/AGPR or regs", "spills", "LDS/shared B", "occupancy"):
        t.add_column(col)
    for r in results:
        regs = (f"{r.vgpr}/{r.sgpr}/{r.agpr or 0}" if r.vgpr is not None else
                (str(r.registers) if r.registers is not None else "—"))
        t.add_row(r.kernel, r.target, Text("compiled", style="green") if r.ok else Text(r.error or "failed", style="red"),
                  regs, str(r.spills) if r.spills is not None else "—",
                  str(r.shared_bytes) if r.shared_bytes is not None else "—", r.occupancy or "—")
    console.print(t)


def aot_report(result: Result, console: Any) -> None:
    """`smoke --compile-only` in human form: the per kernel × target table, then one line per target finding."""
    from rocm_triton_doctor import render

    aot_table([AotResult(**d) for d in result.data.get("results", [])], console)
    render.print_findings(console, result.findings)
