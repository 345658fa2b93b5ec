"""Host µs per call (ours / eager) of several `smoke --preset launch --json` files side by side, one column per file:
the table of an A/B run (launch_preset_ab.py). Usage: python benchmarks/launch_table.py DIR (reads DIR/*plans-*.json)."""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path


def main(folder: str) -> None:
    rows: dict[str, dict[str, tuple]] = {}
    for path in sorted(glob.glob(folder + "/*plans-*.json")):
        arm = Path(path).stem
        try:
            data = json.loads(Path(path).read_text())
        except ValueError as exc:
            print(arm, "unreadable:", exc)
            continue
        for r in data["results"]:
            lu = r.get("launch_us") or {}
            rows.setdefault(f"{r['kernel']} {r['case']}", {})[arm] = (lu.get("triton"), lu.get("eager"), r["status"])
    arms = sorted({a for v in rows.values() for a in v})
    print("case".ljust(48), " | ".join(arms))
    for case, v in rows.items():
        print(case[:48].ljust(48), " | ".join(f"{v[a][0]}/{v[a][1]} {v[a][2]}" if a in v else "-" for a in arms))


if __name__ == "__main__":
    main(sys.argv[1])
