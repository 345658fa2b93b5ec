"""install's verify: one tiny kernel per visible device in the target interpreter (issue #15 item 3), with fake
interpreters that succeed, fail on one device, crash, hang, or are missing — and once with the real interpreter."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from rocm_triton_doctor.install import devicekernel
from rocm_triton_doctor.install.devicekernel import MARK


def fake_python(tmp_path: Path, body: str) -> str:
    """An 'interpreter' that ignores `-c SCRIPT` and prints the given events (or does what `body` says)."""
    p = tmp_path / "python"
    p.write_text(f"#!{sys.executable}\nimport json, sys, time, os\nM = {MARK!r}\n"
                 "def say(**kw):\n    print(M + json.dumps(kw), flush=True)\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def _two_gpus(second_ok: bool) -> str:
    ev = [{"event": "start", "device": "cuda:0", "name": "AMD Radeon RX 7900 XTX"},
          {"event": "torch", "device": "cuda:0", "ok": True}, {"event": "triton", "device": "cuda:0", "ok": True},
          {"event": "start", "device": "cuda:1", "name": "AMD Radeon RX 6700 XT"},
          {"event": "torch", "device": "cuda:1", "ok": second_ok,
           "error": None if second_ok else "RuntimeError: HIP error: invalid device function"}]
    if second_ok:
        ev.append({"event": "triton", "device": "cuda:1", "ok": True})
    return "".join(f"say(**{json.dumps(e)})\n" for e in ev).replace("null", "None").replace("true", "True").replace(
        "false", "False") + "say(event='done')\n"


def test_all_devices_pass(tmp_path: Path) -> None:
    findings, failed = devicekernel.run(fake_python(tmp_path, _two_gpus(True)), {}, timeout=30)
    assert failed == [] and [f.severity.value for f in findings] == ["ok", "ok"]
    assert findings[1].title == "torch and a Triton kernel ran on cuda:1 (AMD Radeon RX 6700 XT)"
    assert {f.id for f in findings} == {"verify-device-kernel"}


def test_one_device_fails(tmp_path: Path) -> None:
    findings, failed = devicekernel.run(fake_python(tmp_path, _two_gpus(False)), {}, timeout=30)
    assert failed == ["cuda:1 (AMD Radeon RX 6700 XT)"]
    assert [f.severity.value for f in findings] == ["ok", "fail"]
    assert "invalid device function" in findings[1].detail and "cuda:1" in findings[1].title


def test_hang_names_the_device(tmp_path: Path) -> None:
    body = "say(event='start', device='cuda:0', name='gfx1031')\ntime.sleep(60)\n"
    findings, failed = devicekernel.run(fake_python(tmp_path, body), {}, timeout=1)
    assert failed == ["cuda:0 (gfx1031)"] and "did not finish within 1 s" in findings[0].title


def test_crash_and_nothing_started(tmp_path: Path) -> None:
    body = "say(event='start', device='cuda:0', name='x')\nsys.stderr.write('Memory access fault by GPU\\n')\nos.abort()\n"
    findings, failed = devicekernel.run(fake_python(tmp_path, body), {}, timeout=30)
    assert failed == ["cuda:0 (x)"] and "SIGABRT" in findings[0].title and "Memory access fault" in findings[0].detail
    (tmp_path / "b").mkdir()
    findings, failed = devicekernel.run(fake_python(tmp_path / "b", "sys.exit('ModuleNotFoundError: torch')\n"), {},
                                        timeout=30)
    assert failed == ["all devices"] and findings[0].detail == "ModuleNotFoundError: torch"
    findings, failed = devicekernel.run(str(tmp_path / "nope"), {}, timeout=5)
    assert failed == ["all devices"] and "interpreter not found" in findings[0].detail


def test_real_interpreter_on_this_machine() -> None:
    """The real script in the real interpreter: on this CPU-only machine torch runs on the CPU and Triton's
    interpreter runs the kernel (TRITON_INTERPRET is set by the script, not inherited)."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    findings, failed = devicekernel.run(sys.executable, {"PATH": "/usr/bin:/bin"}, timeout=300)
    assert failed == [], findings
    assert findings and all(f.severity.value == "ok" for f in findings)


def test_triton_not_installed_is_not_a_kernel_failure(tmp_path: Path) -> None:
    body = ("say(event='start', device='cpu', name='cpu')\nsay(event='torch', device='cpu', ok=True)\n"
            "say(event='triton', device='cpu', ok=None, error='import triton: not installed')\nsay(event='done')\n")
    findings, failed = devicekernel.run(fake_python(tmp_path, body), {}, timeout=30)
    assert failed == [] and [(f.severity.value, f.title) for f in findings] == [
        ("ok", "torch ran (Triton is not installed) on cpu (cpu)")]


def test_verify_reports_the_failed_device(tmp_path: Path) -> None:
    """verify() runs the after-install checks, the code-object audit checks and the kernels; the failed device is
    returned for the install result (`failed_devices`) and its finding fails the verification."""
    from types import SimpleNamespace

    from rocm_triton_doctor.install.command import verify

    py = fake_python(tmp_path, _two_gpus(False))
    _facts, report, failed = verify(SimpleNamespace(env={}), py, kernel_timeout=30)  # type: ignore[arg-type]
    assert failed == ("cuda:1 (AMD Radeon RX 6700 XT)",)
    ids = {f.id for f in report.findings}
    assert {"verify-device-kernel", "codeobject-gpu-code", "codeobject-target-missing", "torch-import"} <= ids
    assert report.verdict.exit_code != 0
