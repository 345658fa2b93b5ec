"""`smoke --model` output: one table row per form (rich), then which ops of "ours" are ours, then the problems; and
where the last result is kept for `report` (this module imports no torch, so `report` can use it anywhere)."""

from __future__ import annotations

from typing import Any



def last_model_path() -> str:
    """Where `smoke --model` keeps its last result for `report`: beside runner.last_result_path()."""
    import os

    from rocm_triton_doctor.smoke.report import last_result_path

    return os.path.join(os.path.dirname(last_result_path()), "last-model.json")


STATUS_STYLE = {"ok": "green", "error": "bold red", "oom": "yellow", "skipped": "dim"}


def _num(v: float | None, fmt: str) -> str:
    return "—" if v is None else format(v, fmt)


def rows(result: dict[str, Any]) -> list[dict[str, str]]:
    """The table as plain strings, one dict per form (also what the tests read)."""
    out = []
    fastest = min((f["step_ms"]["p50"] for f in result["forms"].values() if f["status"] == "ok"), default=None)
    for name, f in result["forms"].items():
        row = {"form": name, "status": f["status"], "p50 ms": "—", "p20–p80 ms": "—", "tokens/s": "—",
               "time / fastest": "—", "peak MiB": "—", "no-grad params": "—", "loss first → last": "—",
               "vs sdpa": "—", "note": f.get("reason") or f.get("error") or ""}
        if f["status"] == "ok":
            ms = f["step_ms"]
            losses = [v for v in f["losses"] if v is not None]
            row.update({
                "p50 ms": f"{ms['p50']:.2f}", "p20–p80 ms": f"{ms['p20']:.2f}–{ms['p80']:.2f}",
                "tokens/s": _num(f["tokens_per_s"], ",.0f"),
                "time / fastest": f"{ms['p50'] / fastest:.2f}x" if fastest else "—",
                "peak MiB": _num(f["peak_mib"], ",.0f"),
                "no-grad params": (f"{f['params_without_grad']:,} of {f['params']:,}" if f["flagged"]
                                   else "0"),
                "loss first → last": f"{losses[0]:.4f} → {losses[-1]:.4f}" if losses else "not finite",
                "vs sdpa": (f"{f['loss_vs_sdpa_max_rel']:.2%}" if f.get("loss_vs_sdpa_max_rel") is not None
                            else "—"),
                "note": "FLAGGED: parameters without gradient" if f["param_tensors_without_grad"] else (
                    "FLAGGED: loss not finite" if f["flagged"] else f"first step {f['first_step_ms']:,.0f} ms")})
        out.append(row)
    return out


def ours_line(result: dict[str, Any]) -> str:
    ops = result["ours_ops"]
    mine = [op for op, v in ops.items() if v["impl"] == "ours"]
    torch_ops = [op for op, v in ops.items() if v["impl"] != "ours"]
    line = f"ours = our kernels for {', '.join(mine) or 'nothing'}"
    return line + (f"; torch for {', '.join(torch_ops)} (no backward kernel yet)" if torch_ops else "")


def table(result: dict[str, Any], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    c = result["config"]
    t = Table(title=(f"smoke --model {result['preset']} — {result['device_name']}, {result['dtype']}, "
                     f"{c['batch']}x{c['seq']} tokens, {result['steps']} steps ({result['warmup']} warm-up)"),
              title_justify="left", pad_edge=False)
    data = rows(result)
    for col in data[0] if data else ():
        t.add_column(col, justify="left" if col in ("form", "status", "note") else "right")
    for row in data:
        cells = list(row.values())
        t.add_row(cells[0], Text(cells[1], style=STATUS_STYLE.get(cells[1], "")), *cells[2:])
    console.print(t)
    console.print(ours_line(result))
    for check in result["checks"]:
        mark = "[green]ok[/green]" if check["ok"] else "[bold red]FAILED[/bold red]"
        diff = "n/a" if check["max_rel_diff"] is None else f"{check['max_rel_diff']:.3%}"
        floor = check.get("noise_floor")
        why = f", the drift of PyTorch's own {floor['form']} form in this run" if floor else ""
        console.print(f"loss agreement {check['form']} vs {check['vs']}: max {diff} (tolerance "
                      f"{check['tolerance']:.2%}{why}) {mark}")
    for p in result["problems"]:
        console.print(f"[bold red]problem:[/bold red] {p}")
    if result["device"] == "cpu":
        console.print("CPU run: times measure the Triton interpreter and this machine's load, not kernels.")
