"""Unit tests of the pieces behind the fault matrix: finding Python environments, redaction, crash signals, probe
output parsing. Fast, in-process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rocm_triton_doctor.check.probes import pythons
from rocm_triton_doctor.check.probes.runner import CommandResult, crash_signal
from rocm_triton_doctor.check.probes.runtime import parse
from rocm_triton_doctor.check.redact import Redactor, is_secret_name


def _env_dir(prefix: Path, torch: str | None) -> None:
    (prefix / "bin").mkdir(parents=True)
    py = prefix / "bin" / "python"
    py.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    py.chmod(0o755)
    site = prefix / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    if torch:
        (site / "torch").mkdir()
        (site / "torch" / "__init__.py").write_text("")
        (site / f"torch-{torch}.dist-info").mkdir()


def test_pythons_nearest_environment_with_torch_wins(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "home" / "work" / "proj"
    _env_dir(project / ".venv", None)  # nearest, but no torch
    _env_dir(home / "work" / "venv", "2.9.1+rocm6.4")  # a parent's venv
    _env_dir(home / ".virtualenvs" / "rocm", "2.8.0+rocm6.3")
    _env_dir(home / "miniconda3" / "envs" / "ml", "2.7.1+rocm6.2")
    env = {"HOME": str(home), "PATH": "/nonexistent"}
    python, record = pythons.choose(env, cwd=str(project), own="/doctor/bin/python", own_torch=False)
    assert python == str(home / "work" / "venv" / "bin" / "python")
    assert record is not None and record["own"] == "/doctor/bin/python"
    found = {c["where"]: c["torch"] for c in record["candidates"]}  # type: ignore[union-attr]
    assert found == {"./.venv": None, "../venv": "2.9.1+rocm6.4", "~/.virtualenvs": "2.8.0+rocm6.3",
                     "~/miniconda3/envs": "2.7.1+rocm6.2"}


def test_pythons_activated_env_first_and_own_torch_means_no_search(tmp_path: Path) -> None:
    _env_dir(tmp_path / "act", "2.13.0+cpu")
    _env_dir(tmp_path / "proj" / ".venv", "2.9.1")
    env = {"HOME": str(tmp_path / "nohome"), "PATH": "/nonexistent", "VIRTUAL_ENV": str(tmp_path / "act")}
    python, _ = pythons.choose(env, cwd=str(tmp_path / "proj"), own="/x/python", own_torch=False)
    assert python == str(tmp_path / "act" / "bin" / "python")
    assert pythons.choose(env, own="/x/python", own_torch=True) == ("/x/python", None)


def test_pythons_nothing_found_keeps_the_doctors_own(tmp_path: Path) -> None:
    python, record = pythons.choose({"HOME": str(tmp_path), "PATH": "/nonexistent"}, cwd=str(tmp_path),
                                    own="/x/python", own_torch=False)
    assert python == "/x/python" and record is not None and record["candidates"] == []


def test_redaction_catches_secrets_and_spares_ordinary_text() -> None:
    r = Redactor({"user": {"name": "alice"}, "system": {"hostname": "gpu-node-7"}})
    text = ("HF_TOKEN=hf_abcdefghijk AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI' url https://bob:pw123@mirror.corp/simple "
            "https://ghp_0123456789abcdefghij@github.com/x?token=abc123&page=2 'Authorization: Bearer eyJhbGciOi' "
            "key AKIAIOSFODNN7EXAMPLE /home/alice/venv gpu-node-7")
    out = r.text(text)
    for secret in ("hf_abcdefghijk", "wJalrXUtnFEMI", "pw123", "ghp_0123456789abcdefghij", "abc123", "eyJhbGciOi",
                   "AKIAIOSFODNN7EXAMPLE", "alice", "gpu-node-7"):
        assert secret not in out, (secret, out)
    assert "page=2" in out and "mirror.corp/simple" in out
    plain = ("PATH=/usr/bin:/opt/rocm/bin HSA_OVERRIDE_GFX_VERSION=11.0.0 the token generation is basic; "
             "KEYBOARD=us PYTORCH_ROCM_ARCH=gfx942 torch 2.9.1+rocm6.4")
    assert r.text(plain) == plain
    assert r.obj({"DB_PASSWORD": "x1", "env": {"MY_API_KEY": "k"}, "PATH": "/bin"}) == {
        "DB_PASSWORD": "<redacted>", "env": {"MY_API_KEY": "<redacted>"}, "PATH": "/bin"}
    assert is_secret_name("GITHUB_TOKEN") and is_secret_name("aws_secret_access_key") and not is_secret_name("PATH")


def test_crash_signal_from_return_codes() -> None:
    assert crash_signal(-11) == "SIGSEGV" and crash_signal(-6) == "SIGABRT"
    assert crash_signal(139) == "SIGSEGV" and crash_signal(134) == "SIGABRT"  # through a shell: 128 + N
    assert crash_signal(0) is None and crash_signal(1) is None and crash_signal(130) is None  # 130: Ctrl-C, no crash
    assert crash_signal(None) is None and crash_signal(True) is None


def test_runtime_probe_output_names_the_step_that_died() -> None:
    stages = "\n@@RTD-PARTIAL@@{\"torch_static_version\": \"2.13.0+cpu\"}\n@@RTD-STAGE@@import torch\n"
    r = parse(CommandResult(("py", "probe"), -11, stages, ""), 30)
    assert r["error"] == "import torch was killed by SIGSEGV" and r["torch_import_failed"] is True
    assert r["torch_static_version"] == "2.13.0+cpu"
    r = parse(CommandResult(("py", "probe"), None, stages, "", timed_out=True), 30)
    assert r["error"].startswith("import torch hung for 30 s") and r["timed_out"] is True
    triton = stages + "@@RTD-PARTIAL@@{\"torch_version\": \"2.13.0+cpu\", \"torch_imported\": true}\n@@RTD-STAGE@@import triton\n"
    r = parse(CommandResult(("py", "probe"), None, triton, "", timed_out=True), 30)
    assert r["torch_version"] == "2.13.0+cpu" and "timed_out" not in r and r["triton_import_error"].startswith("import triton hung")
    r = parse(CommandResult(("sh", "notpy"), 0, "hello\n", ""), 30)
    assert r["error"].startswith("probe gave no result")
    assert os.path.basename(str(parse(CommandResult(("/x/python",), None, missing=True), 5)["error"])) == "python"


def test_d15_error_cell_never_shows_a_pass_above_its_tolerance() -> None:
    """Defect 15: "0.03 / 2e-02 PASS". A pass within atol + rtol·|ref| shows the bound that holds, rounded alike."""
    from types import SimpleNamespace

    from rocm_triton_doctor.smoke.render import error_vs_tolerance

    def row(status: str, max_abs: float, max_rel: float, atol: float = 0.02, rtol: float = 0.02) -> str:
        return error_vs_tolerance(SimpleNamespace(status=status, max_abs=max_abs, max_rel=max_rel, atol=atol, rtol=rtol))

    assert row("pass", 0.0076, 0.001) == "0.0076 / 0.02"
    assert row("pass", 0.03, 0.0076) == "0.0076 / 0.02 rel"  # atol alone is exceeded; rtol holds
    assert row("pass", 0.03, 0.5) == "0.03 ≤ 0.02+0.02·|ref|"  # only the combined bound holds: no "x / y" read
    assert row("pass", 0.0249, 0.1, atol=0.025) == "0.025 / 0.025"  # rounded alike: never "0.025 / 2e-02"
    assert row("fail", 0.03, 0.5) == "0.03 / 0.02"  # a failure shows the error above the tolerance, as it is
    assert error_vs_tolerance(SimpleNamespace(status="error", max_abs=None, max_rel=None, atol=None, rtol=None)) == ""
