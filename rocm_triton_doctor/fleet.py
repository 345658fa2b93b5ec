"""`fleet`: many machines' `check --json`, `smoke --json` and distributed results -> which nodes drifted from the
majority (ROCm, driver, kernel, torch, Triton, gfx), which fail, which are slow outliers."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocm_triton_doctor.result import ExitCode, Result

ATTRS = ("os", "kernel", "amdgpu", "rocm", "gfx", "python", "torch", "triton")
UNREADABLE = "rocm-triton-doctor/unreadable"  # internal marker for a file that could not be read


class FleetError(Exception):
    """No usable input (maps to exit 3)."""


@dataclass
class Node:
    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    failing: list[str] = field(default_factory=list)
    perf: dict[str, float] = field(default_factory=dict)  # case id -> % of ceiling (or achieved)
    sources: list[str] = field(default_factory=list)
    drift: dict[str, str] = field(default_factory=dict)  # attr -> majority value it differs from
    slow: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "fail" if self.failing else ("drift" if self.drift or self.slow else "ok")


def _load(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files += sorted(path.rglob("*.json"))
        elif path.exists():
            files.append(path)
        else:
            raise FleetError(f"no such file or directory: {p}")
    out = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            # One unreadable file (the empty one `ssh host ... > file` leaves for a down host) is one failed node,
            # not the end of the whole fleet report (issue #18, defect 5).
            out.append((str(f), {"schema": UNREADABLE, "error": f"not a JSON result ({exc})"}))
            continue
        if isinstance(data, dict) and str(data.get("schema", "")).startswith("rocm-triton-doctor/"):
            out.append((str(f), data))
    if not any(d["schema"] != UNREADABLE for _, d in out):
        raise FleetError("no rocm-triton-doctor results found (check --json, smoke --json, smoke --distributed --json)")
    return out


def _node(nodes: dict[str, Node], name: str) -> Node:
    return nodes.setdefault(name, Node(name))


def _from_facts(n: Node, facts: dict[str, Any]) -> None:
    gfx = sorted({g.get("effective_gfx") or g.get("gfx") for g in facts.get("amd_gpus") or [] if g.get("gfx")})
    amdgpu = facts.get("amdgpu") or {}
    triton = facts.get("triton") or {}
    values = {"os": facts.get("os"), "kernel": facts.get("kernel"),
              "amdgpu": amdgpu.get("version") or ("in-tree" if amdgpu.get("state") == "live" else None),
              "rocm": facts.get("rocm"), "gfx": ",".join(gfx) or None, "python": facts.get("python"),
              "torch": facts.get("torch"), "triton": ",".join(f"{k} {v}" for k, v in sorted(triton.items())) or None}
    for k, v in values.items():
        if v:
            n.attrs[k] = str(v)


def _from_smoke(n: Node, d: dict[str, Any], prefix: str = "") -> None:
    for r in d.get("results") or []:
        cid = f"{prefix}{r['kernel']}[{r['case']}]"
        if r.get("status") != "pass":
            n.failing.append(f"smoke {cid}: {r.get('status')}")
        v = r.get("pct_ceiling") if r.get("pct_ceiling") is not None else r.get("achieved")
        if isinstance(v, (int, float)):
            n.perf[cid] = float(v)
    versions = d.get("versions") or {}
    if versions.get("torch"):
        n.attrs.setdefault("torch", versions["torch"])


def mixed(nodes: list[Node]) -> dict[str, list[str]]:
    """Attributes on which the fleet has no strict majority: no node can be called the odd one out."""
    out = {}
    for attr in ATTRS:
        values = [n.attrs[attr] for n in nodes if attr in n.attrs]
        if len(values) >= 2 and Counter(values).most_common(1)[0][1] * 2 <= len(values):
            out[attr] = sorted(set(values))
    return out


def collect(paths: list[str], slow_ratio: float = 0.8) -> list[Node]:
    nodes: dict[str, Node] = {}
    for path, d in _load(paths):
        if d.get("schema") == UNREADABLE:  # one unreadable file is one failed node (issue #18, defect 5)
            n = _node(nodes, Path(path).stem)
            n.failing.append(f"{path}: {d['error']}")
            n.sources.append(path)
            continue
        parsed = Result.from_dict(d)
        kind = parsed.schema.split("/")[0]
        if kind == "check":
            facts = d.get("facts") or {}
            n = _node(nodes, facts.get("host") or Path(path).stem)
            _from_facts(n, facts)
            n.failing += [f"check {f.id}: {f.title}" for f in parsed.findings if f.severity.value == "fail"]
            if parsed.exit_code in (3, 4) or parsed.status in ("could-not-check", "crashed"):  # defect 5
                n.failing.append(f"check could not run ({parsed.status}): {d.get('summary') or ''}".rstrip(": "))
        elif kind == "smoke":
            n = _node(nodes, d.get("host") or Path(path).stem)
            _from_smoke(n, d)
        elif kind == "distributed":
            for rank in d.get("ranks") or []:
                host = rank.get("host") or "?"
                n = _node(nodes, f"{host}:gpu{rank.get('local_rank')}")
                _from_facts(n, rank.get("facts") or {})
                if rank.get("status") != "pass":
                    n.failing.append(f"rank {rank.get('rank')}: {rank.get('error') or rank.get('status')}")
                if rank.get("smoke"):
                    _from_smoke(n, rank["smoke"])
        else:
            continue
        n.sources.append(path)
    result = list(nodes.values())
    for attr in ATTRS:
        values = [n.attrs[attr] for n in result if attr in n.attrs]
        if len(values) < 2:
            continue
        majority, count = Counter(values).most_common(1)[0]
        if count == len(values) or count * 2 <= len(values):
            continue  # all equal, or no strict majority (reported by mixed())
        for n in result:
            if attr in n.attrs and n.attrs[attr] != majority:
                n.drift[attr] = majority
    cases = {c for n in result for c in n.perf}
    for c in cases:
        vals = [n.perf[c] for n in result if c in n.perf]
        if len(vals) < 3:
            continue  # a median of two says nothing about which one is slow
        med = statistics.median(vals)
        for n in result:
            if c in n.perf and med > 0 and n.perf[c] < slow_ratio * med:
                n.slow[c] = f"{n.perf[c]:.0f} vs median {med:.0f}"
    return sorted(result, key=lambda n: ({"fail": 0, "drift": 1, "ok": 2}[n.status], n.name))


def exit_code(nodes: list[Node], strict: bool) -> int:
    if any(n.status == "fail" for n in nodes):
        return 1
    if strict and any(n.status == "drift" for n in nodes):
        return 1
    return 0


def run(paths: list[str], slow_ratio: float = 0.8, strict: bool = False) -> tuple[Result, list[Node]]:
    """`fleet`: the Result (and the nodes, for the table). Unusable input is an error Result (exit 3)."""
    try:
        nodes = collect(paths, slow_ratio)
    except FleetError as exc:
        return Result.error("fleet", str(exc), ExitCode.COULD_NOT_CHECK), []
    return to_result(nodes, strict), nodes


def to_result(nodes: list[Node], strict: bool) -> Result:
    statuses = {n.status for n in nodes}
    status = "fail" if "fail" in statuses else ("drift" if "drift" in statuses else "ok")
    return Result("fleet/1", "fleet", status, exit_code(nodes, strict),
                  {"mixed": mixed(nodes),
                   "nodes": [{"name": n.name, "status": n.status, "attrs": n.attrs, "drift": n.drift,
                              "failing": n.failing, "slow": n.slow, "sources": n.sources} for n in nodes]})


def to_dict(nodes: list[Node], strict: bool) -> dict[str, Any]:
    return to_result(nodes, strict).to_dict()


def table(nodes: list[Node], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"fleet: {len(nodes)} node(s)", title_justify="left")
    t.add_column("node")
    t.add_column("status")
    for a in ATTRS:
        t.add_column(a)
    for n in nodes:
        style = {"fail": "bold red", "drift": "yellow", "ok": "green"}[n.status]
        cells: list[Any] = [n.name, Text(n.status, style=style)]
        for a in ATTRS:
            v = n.attrs.get(a, "—")
            cells.append(Text(f"≠ {v}", style="bold yellow") if a in n.drift else v)
        t.add_row(*cells)
    console.print(t)
    for attr, values in mixed(nodes).items():
        console.print(Text(f"  no majority for {attr}: {', '.join(values)}", style="yellow"))
    for n in nodes:
        for f in n.failing:
            console.print(Text(f"  {n.name}: {f}", style="red"))
        for a, maj in n.drift.items():
            console.print(Text(f"  {n.name}: {a} is {n.attrs[a]!r}, the majority has {maj!r}", style="yellow"))
        for c, why in n.slow.items():
            console.print(Text(f"  {n.name}: slow outlier in {c}: {why}", style="yellow"))
