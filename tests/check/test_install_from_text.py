"""`install --dry-run --snapshot` plans from the same partial evidence as `check` (issue #10 item 9): a snapshot made
from pasted text where only rocminfo/ollama/collect_env show the AMD GPU is an AMD machine, and a snapshot that does
not record its Python is planned for the interpreter named (said in a note), never for an empty version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.facts.platform import accelerator
from rocm_triton_doctor.check.sources import snapshot_from_text

ROOT = Path(__file__).resolve().parents[2]
ROCMINFO = """*******
Agent 2
*******
  Name:                    gfx1100
  Marketing Name:          AMD Radeon RX 7900 XTX
  Vendor Name:             AMD
  Device Type:             GPU
"""


def test_amd_is_recognised_from_pasted_text_alone() -> None:
    for text in (ROCMINFO, "rocminfo | grep gfx\n  Name:                    gfx1100\n",
                 ('time=x level=INFO source=amd_linux.go msg="detected amdgpu versions [gfx1031]"\n'
                  'msg="amdgpu is not supported (supported types:[gfx1030 gfx1100])" gpu_type=gfx1031 gpu=0\n')):
        assert accelerator(build_facts(snapshot_from_text([text]))) == "amd", text


def test_dry_run_plans_an_amd_install_from_a_pasted_rocminfo(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(snapshot_from_text([ROCMINFO])))
    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "install", "--snapshot", str(snap), "--dry-run",
                          "--json", "--venv", "/tmp/rocm-env"], capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
    plan = json.loads(res.stdout)
    assert "cannot tell" not in res.stdout + res.stderr
    assert plan.get("platform") == "amd" and plan.get("python_version"), plan
    assert any("does not record its Python" in n for n in plan.get("notes", [])), plan
