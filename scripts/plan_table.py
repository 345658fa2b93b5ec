"""Print (or --write into docs/install.md) the per-GPU install-plan table, computed by the plan code itself.

    python scripts/plan_table.py [--write]

One row per GPU family, one column per Python version: what `rocm-triton-doctor install --dry-run` plans on a
machine with that one GPU, no system ROCm and an empty environment, and from which source. The uv and torchruntime
columns are what those tools choose, from the knowledge audit (knowledge-audit.md §2: astral-sh/uv @ 26a9dd4,
2026-08-21; easydiffusion/torchruntime @ 33277c6, 2026-02-26) -- not computed here.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocm_triton_doctor import knowledge  # noqa: E402
from rocm_triton_doctor.check.facts import Fact, Status, build_facts  # noqa: E402
from rocm_triton_doctor.install.plan import BadOption, NoWheel, Options, make_plan  # noqa: E402

PYTHONS = ("3.10.14", "3.12.3", "3.13.1", "3.15.0")
FAMILIES = ("gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1031", "gfx1032", "gfx1100", "gfx1101",
            "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201")
OTHERS = {  # (uv --torch-backend=auto, torchruntime), knowledge-audit.md §2
    "gfx906": ("rocm7.2", "rocm5.7 + 9.0.6"), "gfx908": ("rocm7.2", "cpu"), "gfx90a": ("rocm7.2", "cpu"),
    "gfx942": ("rocm7.2", "cpu"), "gfx950": ("rocm7.2", "cpu"), "gfx1030": ("rocm7.2", "rocm6.2 + 10.3.0"),
    "gfx1031": ("cpu", "rocm6.2 + 10.3.0"), "gfx1032": ("cpu", "rocm6.2 + 10.3.0"), "gfx1100": ("rocm7.2", "rocm6.2 + 11.0.0"),
    "gfx1101": ("rocm7.2", "rocm6.2 + 11.0.0"), "gfx1102": ("rocm7.2", "rocm6.2 + 11.0.0"),
    "gfx1103": ("cpu", "rocm6.2 + 11.0.3 / 11.0.1"), "gfx1150": ("rocm7.2", "rocm6.2 + 11.5.0"),
    "gfx1151": ("rocm7.2", "rocm6.2 + 11.5.1"), "gfx1200": ("rocm7.2", "rocm6.4 + 12.0.0"), "gfx1201": ("rocm7.2", "rocm6.4 + 12.0.0"),
}
START, END = "<!-- plan-table:start (scripts/plan_table.py --write) -->", "<!-- plan-table:end -->"


def machine(gfx: str) -> object:
    snap = json.loads((ROOT / "tests/fixtures/scenarios/rx7900xtx-healthy.json").read_text())
    snap.pop("runtime", None)
    f = build_facts(snap)
    g = replace((f.gpus.value or ())[0], gfx=gfx, effective_gfx=gfx, info=knowledge.gfx_info(gfx), name=gfx,
                integrated=False)
    py = replace(f.python.value, distributions={}, triton_owners=()) if f.python.value else None
    return replace(f, gpus=Fact(Status.FOUND, (g,), "table"), rocm=Fact(Status.ABSENT, None, "table"),
                   python=Fact(Status.FOUND, py, "table"))


def cell(gfx: str, py: str) -> str:
    try:
        p = make_plan(machine(gfx), Options(), py, "python")  # type: ignore[arg-type]
    except (NoWheel, BadOption) as exc:
        return "none (" + str(exc).split(";")[0].split(":")[0][:60] + ")"
    if p.source == "therock":
        return f"TheRock {p.torch_version} `[device-{gfx}]`"
    env = "".join(f" + {k.replace('HSA_OVERRIDE_GFX_VERSION', 'override')}={v}" for k, v in p.env.items())
    return f"{p.torch_version.split('+')[0]} {p.index}{env}"


def table() -> str:
    rows = ["| GPU | " + " | ".join(f"Python {'.'.join(v.split('.')[:2])}" for v in PYTHONS) + " | uv (auto) | torchruntime |",
            "|---|" + "---|" * (len(PYTHONS) + 2)]
    for gfx in FAMILIES:
        info = knowledge.gfx_info(gfx)
        name = f"{gfx} ({info.products[0]})" if info and info.products else gfx
        uv, tr = OTHERS[gfx]
        rows.append(f"| {name} | " + " | ".join(cell(gfx, py) for py in PYTHONS) + f" | {uv} | {tr} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--write", action="store_true", help="replace the table in docs/install.md")
    a = ap.parse_args(argv)
    text = table()
    if not a.write:
        print(text)
        return 0
    doc = ROOT / "docs" / "install.md"
    body = doc.read_text()
    head, rest = body.split(START, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(f"{head}{START}\n{text}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
