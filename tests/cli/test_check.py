"""Layer (d): the CLI through CliRunner and through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from rocm_triton_doctor.cli import cli

from ..conftest import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def test_snapshot_json_envelope_matches_exit_code() -> None:
    code, out = invoke("check", "--snapshot", str(SCENARIOS / "gfx1031-needs-override.json"), "--json")
    data = json.loads(out)
    assert code == data["exit_code"] == 1
    assert data["schema"] == "rocm-triton-doctor/check/1" and data["status"] == "problems"
    assert data["facts"]["amd_gpus"][0]["gfx"] == "gfx1031"
    fix = next(f for f in data["findings"] if f["id"] == "hsa-override-needed")["fix"]
    assert fix["commands"] == ["export HSA_OVERRIDE_GFX_VERSION=10.3.0"]


def test_human_output_ends_with_verdict_and_shows_fix() -> None:
    code, out = invoke("check", "--snapshot", str(SCENARIOS / "kfd-root-only.json"))
    assert code == 1
    assert out.rstrip().splitlines()[-1].startswith("Verdict: PROBLEMS")
    assert "udev" in out and "Traceback" not in out


def test_markdown_output() -> None:
    code, out = invoke("check", "--snapshot", str(SCENARIOS / "mi300x-healthy.json"), "--markdown")
    assert code == 0 and out.startswith("## rocm-triton-doctor check: **healthy**")
    assert "| torch | 2.7.1+rocm6.3 (rocm) |" in out


def test_bad_snapshot_is_one_line_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for content in ("{not json", json.dumps({"schema": "other/1"}), json.dumps([1, 2]),
                    json.dumps({"schema": "rocm-triton-doctor/snapshot/1", "files": "oops"})):
        bad.write_text(content)
        res = CliRunner().invoke(cli, ["check", "--snapshot", str(bad)])
        assert res.exit_code == 3, res.output
        assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["check", "--snapshot", str(tmp_path / "missing.json"), "--json"])
    assert res.exit_code == 3 and json.loads(res.output)["exit_code"] == 3


def test_usage_errors_exit_2() -> None:
    assert invoke("check", "--only", "nope")[0] == 2
    assert CliRunner().invoke(cli, ["check", "--json", "--markdown"]).exit_code == 2
    assert CliRunner().invoke(cli, ["check", "--bogus"]).exit_code == 2


def test_list_checks_json_is_the_registry() -> None:
    from rocm_triton_doctor.check.checks import REGISTRY

    code, out = invoke("check", "--list-checks", "--json")
    assert code == 0 and [c["id"] for c in json.loads(out)] == [c.id for c in REGISTRY]


def test_only_and_strict() -> None:
    snap = str(SCENARIOS / "igpu-dgpu-global-override.json")
    code, out = invoke("check", "--snapshot", snap, "--only", "igpu-with-dgpu", "--json")
    data = json.loads(out)
    assert {f["id"] for f in data["findings"]} == {"igpu-with-dgpu"} and code == 0
    assert invoke("check", "--snapshot", snap, "--only", "igpu-with-dgpu", "--strict")[0] == 1


def test_save_snapshot_roundtrip_and_redact(tmp_path: Path) -> None:
    src = json.loads((SCENARIOS / "mi300x-healthy.json").read_text())
    src["user"]["name"] = "alice"
    src["system"] = {"hostname": "node-17.cluster"}
    src["env"]["PATH"] = "/home/alice/venv/bin:/usr/bin"
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(src))
    out = tmp_path / "out.json"
    code, text = invoke("check", "--snapshot", str(inp), "--save-snapshot", str(out), "--redact", "--json")
    assert code == 0
    saved = out.read_text()
    for secret in ("alice", "node-17.cluster", "GPU-8af705259683161c"):
        assert secret not in saved and secret not in text
    again = invoke("check", "--snapshot", str(out), "--json")
    assert again[0] == 0


def test_root_option_reads_a_fake_tree(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text('ID=ubuntu\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.2 LTS"\n')
    node = tmp_path / "sys/class/kfd/kfd/topology/nodes/1"
    node.mkdir(parents=True)
    (node / "properties").write_text("simd_count 80\nsimd_per_cu 2\ngfx_target_version 110501\ndevice_id 5510\n")
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/kfd").write_text("")
    code, out = invoke("check", "--root", str(tmp_path), "--json", "--only", "gpus-detected")
    data = json.loads(out)
    assert data["facts"]["amd_gpus"][0]["gfx"] == "gfx1151"
    assert "Strix Halo" in data["findings"][0]["title"]


def test_real_subprocess_no_runtime_json() -> None:
    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "check", "--no-runtime", "--json"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    data = json.loads(res.stdout)
    assert res.returncode == data["exit_code"] in (0, 1)
    assert data["facts"]["python"] == "{}.{}.{}".format(*sys.version_info[:3])
    assert "Traceback" not in res.stderr


def test_hanging_rocminfo_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    """A fake rocminfo on PATH that hangs: check ends within its timeout plus a second, and says so."""
    fake = tmp_path / "rocminfo"
    fake.write_text("#!/bin/sh\nsleep 300\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "check", "--no-runtime", "--json",
                          "--timeout", "2"], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    elapsed = time.monotonic() - start
    data = json.loads(res.stdout)
    hung = [f for f in data["findings"] if f["id"] == "probe-timeout" and f["severity"] == "warn"]
    assert hung and "rocminfo" in hung[0]["title"]
    assert elapsed < 2 + 1 + 1.5, f"took {elapsed:.1f}s"  # timeout + 1 s, plus interpreter start-up


def test_internal_crash_is_one_line_exit_4() -> None:
    code = ("import rocm_triton_doctor.check as r, sys; r.diagnose = lambda *a, **k: 1/0; "
            "from rocm_triton_doctor.cli import main; sys.argv = ['x', 'check', '--no-runtime']; main()")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 4
    assert "internal error: ZeroDivisionError" in res.stderr and "Traceback" not in res.stderr


def test_findings_catalogue_is_generated_from_the_registry() -> None:
    from rocm_triton_doctor.check.checks import REGISTRY
    from rocm_triton_doctor.check.docs_gen import findings_catalogue

    text = findings_catalogue()
    assert all(f"### `{c.id}`" in text for c in REGISTRY)
    assert (ROOT / "docs" / "findings.md").read_text() == text, "run: python -m rocm_triton_doctor.check.docs_gen"


# -- check --from-text: pasted text -> snapshot -> the same pipeline (issue #10) -----------------------------------

def test_from_text_diagnoses_a_pasted_capture_and_reads_stdin(tmp_path):
    from click.testing import CliRunner

    from rocm_triton_doctor.cli import cli

    capture = ROOT / "tests" / "fixtures" / "captures" / "rocm-docker-116-rocm-terminal-render-group.txt"
    r = CliRunner().invoke(cli, ["check", "--from-text", str(capture), "--json"])
    data = json.loads(r.output)
    assert data["source"].startswith("pasted text") and r.exit_code == data["exit_code"] != 4
    assert any(f["id"] == "gpus-detected" for f in data["findings"])
    r2 = CliRunner().invoke(cli, ["check", "--from-text", "-", "--json"], input=capture.read_text())
    assert json.loads(r2.output)["findings"] == data["findings"]


def test_from_text_refuses_an_empty_paste_and_a_snapshot_beside_it(tmp_path):
    from click.testing import CliRunner

    from rocm_triton_doctor.cli import cli

    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    assert CliRunner().invoke(cli, ["check", "--from-text", str(empty)]).exit_code == 3
    r = CliRunner().invoke(cli, ["check", "--from-text", str(empty), "--snapshot", str(empty)])
    assert r.exit_code == 2 and "mutually exclusive" in r.output
