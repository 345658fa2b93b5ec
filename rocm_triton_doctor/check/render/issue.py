"""`report`: one paste-ready Markdown document for a bug tracker — verdict, findings, key facts, the last smoke
summary, the last `smoke --model` summary, and the (redacted) snapshot in a collapsed block."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from typing import Any

from rocm_triton_doctor import __version__
from rocm_triton_doctor.check.findings import GROUP_TITLES, Severity
from rocm_triton_doctor.check.redact import Redactor
from rocm_triton_doctor.check import CheckReport, diagnose
from rocm_triton_doctor.result import SCHEMA_PREFIX

ORDER = {Severity.FAIL: 0, Severity.WARN: 1, Severity.INFO: 2, Severity.OK: 3, Severity.SKIP: 4}


class SmokeFileError(Exception):
    """The smoke result the user named (--smoke FILE) cannot be read or is no smoke result (exit 3)."""


class StaleSmokeCache(Exception):
    """The last-run cache is unreadable or not a smoke result: the report goes on without it (newcomer-walk.md
    defect 8: a corrupt cache blocked `report`)."""


SMOKE_SCHEMA = SCHEMA_PREFIX + "smoke"


MODEL_SCHEMA = SCHEMA_PREFIX + "model"


def read_smoke(path: str, explicit: bool) -> dict[str, Any] | None:
    """The smoke result to include: None when the default (last-run) file does not exist. A file whose schema is
    not a smoke result's (a snapshot, a check result) is refused, never rendered as "Last smoke run: **None**"."""
    error = SmokeFileError if explicit else StaleSmokeCache
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        if explicit:
            raise SmokeFileError(f"smoke result not found: {path}") from None
        return None
    except (OSError, ValueError) as exc:
        raise error(f"cannot read smoke result {path}: {exc}") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    # `smoke --model` results (schema .../model/N) are smoke results too: the report's "Last model run" section.
    if not (isinstance(schema, str) and schema.startswith((SMOKE_SCHEMA, MODEL_SCHEMA))
            and isinstance(data.get("results", []), list)):
        raise error(f"{path} is not a smoke result (schema {schema!r}; `smoke --save FILE` writes one)")
    return data


def build(snap: dict[str, Any], smoke: dict[str, Any] | None, *, redact: bool = True, source: str = "this machine",
          created: str | None = None, model: dict[str, Any] | None = None) -> tuple[str, CheckReport]:
    """`report`: diagnose `snap`, then the Markdown with the (redacted) snapshot; returns it and the check report
    (whose verdict gives the exit code)."""
    red = Redactor(snap, enabled=redact)
    check = diagnose(snap, source=source)
    check = replace(check, snapshot=red.obj(snap))
    created = created or dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return render(check, smoke, red, created, model), check


def _row(k: str, v: Any) -> str:
    return f"| {k} | {v if v not in (None, '', [], {}) else '—'} |"


def render(check: CheckReport, smoke: dict[str, Any] | None, red: Redactor, created: str,
           model: dict[str, Any] | None = None) -> str:
    s = check.to_dict()["facts"]
    v = check.verdict
    labels = [f"{g['name']} ({g['gfx']}" + (f" → {g['effective_gfx']}" if g["effective_gfx"] != g["gfx"] else "")
              + f", {'iGPU' if g['integrated'] else 'dGPU'})" for g in s["amd_gpus"]]
    gpus = "; ".join((f"{labels.count(x)} × " if labels.count(x) > 1 else "") + x for x in dict.fromkeys(labels))
    triton = ", ".join(f"{k} {val}" for k, val in s["triton"].items())
    if s["triton_backend"]:
        triton += f" (backend {s['triton_backend']}, target {s['triton_arch']})"
    amdgpu = s["amdgpu"] or {}
    out = [f"## rocm-triton-doctor report: **{v.status}** — {v.summary}", "",
           "| | |", "|---|---|",
           _row("OS", s["os"]), _row("Kernel", s["kernel"]),
           _row("WSL / container", ", ".join(x for x in (("WSL" if s["wsl"] else ""), s["container"] or "") if x)),
           _row("amdgpu driver", (amdgpu.get("version") or "in-tree") if amdgpu.get("state") == "live" else amdgpu.get("state")),
           _row("ROCm (system)", s["rocm"]), _row("AMD GPUs", gpus),
           _row("NVIDIA", (f"driver {s['nvidia']['driver']}: " + ", ".join(s["nvidia"]["gpus"])) if s["nvidia"] else None),
           _row("Python", s["python"]),
           _row("torch", f"{s['torch']} ({s['torch_build']}" + (f", HIP {s['hip_version']}" if s["hip_version"] else "")
                + (f", CUDA {s['cuda_version']}" if s["cuda_version"] else "") + ")" if s["torch"] else None),
           _row("torch arch list", ", ".join(s["torch_arch_list"] or [])), _row("Triton", triton), ""]
    problems = sorted((f for f in check.findings if f.severity in (Severity.FAIL, Severity.WARN)),
                      key=lambda f: ORDER[f.severity])
    out += ["### Problems" if problems else "### Problems: none", ""]
    for f in problems:
        out.append(f"- {'❌' if f.severity is Severity.FAIL else '⚠️'} **{f.title}** (`{f.id}`)")
        if f.detail:
            out.append(f"  - {f.detail}")
        if f.fix:
            out.append(f"  - Fix: {f.fix.text}" + (" `" + "` / `".join(f.fix.commands) + "`" if f.fix.commands else ""))
    if smoke:
        out += ["", _smoke_section(smoke)]
    if model:
        out += ["", _model_section(model)]
    rest = [f for f in check.findings if f.severity in (Severity.OK, Severity.INFO)]
    out += ["", "<details><summary>All other checks</summary>", ""]
    out += [f"- {GROUP_TITLES.get(f.group, f.group)}: {f.title} (`{f.id}`, {f.severity.value})" for f in rest]
    out += ["", "</details>", "", "<details><summary>Snapshot (JSON" + (", redacted" if red.enabled else "") +
            ") — re-diagnose with <code>rocm-triton-doctor check --snapshot FILE</code></summary>", "", "```json",
            json.dumps(check.snapshot, indent=1), "```", "", "</details>", "",
            f"_Generated by rocm-triton-doctor {__version__} on {created}; knowledge base as of {check.knowledge_as_of}._",
            ""]
    return red.text("\n".join(out))


def _smoke_section(d: dict[str, Any]) -> str:
    raw = d.get("counts")
    counts = ", ".join(f"{n} {k}" for k, n in (raw if isinstance(raw, dict) else {}).items())
    lines = [f"### Last smoke run: **{d.get('status')}** ({counts})", "",
             (f"{d.get('device_name')} ({d.get('target')}), preset {d.get('preset')}, torch "
             f"{(d.get('versions') or {}).get('torch')}, Triton {(d.get('versions') or {}).get('triton')}, started "
             f"{d.get('started')}."), ""]
    bad = [r for r in d.get("results") or [] if isinstance(r, dict) and r.get("status") != "pass"]
    if bad:
        lines += ["| kernel | case | result | detail |", "|---|---|---|---|"]
        for r in bad:
            detail = r.get("error") or "; ".join(r.get("problems") or [])
            lines.append(f"| {r.get('kernel')} | {r.get('case')} | {r.get('status')} | {str(detail)[:200]} |")
        lines += ["", ("Reproduce one case: `rocm-triton-doctor smoke --only KERNEL` "
                  "(add `--device cpu` to compare with Triton's interpreter).")]
    return "\n".join(lines)


def _model_section(d: dict[str, Any]) -> str:
    """The last `smoke --model` run (smoke/model.py's saved dict): one row per form, what "ours" is, the problems."""
    c = d.get("config") or {}
    lines = [f"### Last model run (`smoke --model {d.get('preset')}`): **{'passed' if d.get('ok') else 'failed'}**", "",
             (f"{d.get('device_name')}, {d.get('dtype')}, {c.get('batch')}x{c.get('seq')} tokens, {d.get('steps')} "
              f"steps, torch {(d.get('versions') or {}).get('torch')}, Triton {(d.get('versions') or {}).get('triton')}."),
             "", "| form | status | p50 ms | peak MiB | params without grad | loss first → last |", "|---|---|---|---|---|---|"]
    for name, f in (d.get("forms") or {}).items():
        losses = [x for x in f.get("losses") or [] if x is not None]
        loss = f"{losses[0]:.4f} → {losses[-1]:.4f}" if losses else "—"
        p50, peak = (f.get("step_ms") or {}).get("p50"), f.get("peak_mib")
        lines.append(f"| {name} | {f.get('status')} | {'—' if p50 is None else f'{p50:.2f}'} | "
                     f"{'—' if peak is None else f'{peak:.0f}'} | {f.get('params_without_grad', '—')} | {loss} |")
    ops = d.get("ours_ops") or {}
    lines += ["", "ours = " + ", ".join(f"{op}: {v.get('impl')}" for op, v in ops.items()) + "."]
    lines += [f"- problem: {p[:300]}" for p in d.get("problems") or []]
    return "\n".join(lines)
