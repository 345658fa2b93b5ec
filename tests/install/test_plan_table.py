"""docs/install.md's per-GPU plan table is the plan code's own output (scripts/plan_table.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_docs_table_matches_the_plan_code() -> None:
    spec = importlib.util.spec_from_file_location("plan_table", ROOT / "scripts" / "plan_table.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.table()
    doc = (ROOT / "docs" / "install.md").read_text()
    assert f"{mod.START}\n{text}\n{mod.END}" in doc, "run: python scripts/plan_table.py --write"
    rows = [ln for ln in text.splitlines() if ln.startswith("| gfx")]
    assert len(rows) == 16 and all(ln.count("|") == 8 for ln in rows)
    assert "TheRock 2.14.* `[device-gfx1031]`" in text  # the native route the audit found missing
