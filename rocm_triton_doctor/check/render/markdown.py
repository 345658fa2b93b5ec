"""Markdown for `check --markdown` (and the base of `report`)."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import GROUP_TITLES, Severity
from rocm_triton_doctor.check.redact import Redactor
from rocm_triton_doctor.check import CheckReport

ICON = {Severity.OK: "✅", Severity.INFO: "ℹ️", Severity.WARN: "⚠️", Severity.FAIL: "❌", Severity.SKIP: "➖"}


def render(report: CheckReport, verbose: bool = False, redactor: Redactor | None = None) -> str:
    red = redactor or Redactor(enabled=False)
    v = report.verdict
    out = [f"## rocm-triton-doctor check: **{v.status}** — {v.summary}", ""]
    s = report.to_dict()["facts"]
    rows = [("OS", s["os"]), ("Kernel", s["kernel"]), ("ROCm (system)", s["rocm"]),
            ("AMD GPUs", ", ".join(f"{g['name']} ({g['gfx']})" for g in s["amd_gpus"]) or None),
            ("NVIDIA", ", ".join(s["nvidia"]["gpus"]) if s["nvidia"] else None),
            ("Python", s["python"]), ("torch", f"{s['torch']} ({s['torch_build']})" if s["torch"] else None),
            ("Triton", ", ".join(f"{k} {v}" for k, v in s["triton"].items()) or None)]
    out += ["| | |", "|---|---|"] + [f"| {k} | {red.text(str(v)) if v is not None else '—'} |" for k, v in rows] + [""]
    group = None
    for f in report.findings:
        if f.severity is Severity.SKIP and not verbose:
            continue
        if f.group != group:
            group = f.group
            out += ["", f"### {GROUP_TITLES.get(group, group)}", ""]
        out.append(f"- {ICON[f.severity]} **{red.text(f.title)}** `{f.id}`")
        if f.detail and f.severity is not Severity.OK:
            out.append(f"  - {red.text(f.detail)}")
        if f.fix and f.severity in (Severity.FAIL, Severity.WARN):
            out.append(f"  - Fix: {red.text(f.fix.text)}")
            if f.fix.commands:
                out.append("    ```sh")
                out += [f"    {red.text(c)}" for c in f.fix.commands]
                out.append("    ```")
    out += ["", f"_Knowledge base as of {report.knowledge_as_of}; exit code {int(v.exit_code)}._", ""]
    return "\n".join(out)
