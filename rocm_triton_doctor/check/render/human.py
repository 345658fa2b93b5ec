"""Human output for `check`: findings grouped by topic, fixes under problems, one verdict line last."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from rocm_triton_doctor.check.findings import Finding, Severity
from rocm_triton_doctor.check.redact import Redactor
from rocm_triton_doctor.check import CheckReport

GROUP_TITLES = {
    "platform": "Platform", "driver": "Kernel driver", "access": "Device access", "gpus": "GPUs",
    "overrides": "HSA overrides", "rocm": "System ROCm", "python": "Python", "torch": "PyTorch",
    "triton": "Triton", "runtime": "Runtime imports", "probes": "Probes", "nvidia": "NVIDIA",
}
MARK = {Severity.OK: ("✓", "green"), Severity.INFO: ("•", "cyan"), Severity.WARN: ("!", "yellow"),
        Severity.FAIL: ("✗", "red"), Severity.SKIP: ("-", "dim")}


def render(report: CheckReport, console: Console, verbose: bool = False, redactor: Redactor | None = None) -> None:
    red = redactor or Redactor(enabled=False)
    groups: dict[str, list[Finding]] = {}
    for f in report.findings:
        groups.setdefault(f.group, []).append(f)
    skipped = 0
    console.print(Text(f"rocm-triton-doctor check — {red.text(report.source)}", style="bold"))
    for group, items in groups.items():
        shown = [f for f in items if verbose or f.severity is not Severity.SKIP]
        skipped += len(items) - len(shown)
        if not shown:
            continue
        console.print()
        console.print(Text(GROUP_TITLES.get(group, group), style="bold underline"))
        for f in shown:
            mark, style = MARK[f.severity]
            loud = style if f.severity in (Severity.FAIL, Severity.WARN) else ""
            line = Text.assemble((f" {mark} ", f"bold {style}"), (red.text(f.title), loud), (f"  [{f.id}]", "dim"))
            console.print(line)
            show_detail = f.severity in (Severity.FAIL, Severity.WARN) or verbose
            if f.detail and (show_detail or f.severity is Severity.INFO):
                console.print(Text("     " + red.text(f.detail), style="dim" if f.severity is not Severity.FAIL else ""))
            if f.fix and f.severity in (Severity.FAIL, Severity.WARN):
                flags = [n for n, on in (("sudo", f.fix.needs_sudo), ("re-login", f.fix.needs_relogin),
                                         ("reboot", f.fix.needs_reboot)) if on]
                console.print(Text("     fix: " + red.text(f.fix.text) + (f"  ({', '.join(flags)})" if flags else ""),
                                   style="bold"))
                for cmd in f.fix.commands:
                    console.print(f"       [cyan]$ {escape(red.text(cmd))}[/cyan]", soft_wrap=True)
                for link in f.links:
                    console.print(Text(f"     see: {link}", style="dim"))
    console.print()
    if skipped:
        console.print(Text(f"{skipped} check(s) not applicable here (--verbose shows them)", style="dim"))
    console.print(Text(f"Knowledge base as of {report.knowledge_as_of}.", style="dim"))
    v = report.verdict
    style = {"healthy": "bold green", "warnings": "bold yellow"}.get(v.status, "bold red")
    console.print(Text(f"Verdict: {v.status.upper()} — {v.summary} (exit {int(v.exit_code)})", style=style))
