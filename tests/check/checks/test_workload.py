"""check --pid / --unit (issue #15 item 4): the workload's environment is read, compared with the shell's, and a
difference that matters is a finding with the fix for where the workload is started."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from rocm_triton_doctor.check.checks import run_checks, select
from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.findings import Finding
from rocm_triton_doctor.check.fixsafety import violations
from rocm_triton_doctor.check.probes import workload
from rocm_triton_doctor.check.probes.collect import Collector
from rocm_triton_doctor.check.sources import snapshot_from_text

from ...conftest import load_scenario

SHOW = ('LoadState=loaded\nEnvironment="OLLAMA_HOST=0.0.0.0" HSA_XNACK=0 "LD_LIBRARY_PATH=/opt/a b"\n'
        "EnvironmentFiles=/etc/default/ollama (ignore_errors=yes)\nEnvironmentFiles=/etc/ollama.env (ignore_errors=no)\n")


def _check(snap: dict[str, Any]) -> list[Finding]:
    return run_checks(build_facts(snap), select(["workload-env-differs"]))


def _wl(env: dict[str, str], source: str = "unit ollama.service", **more: Any) -> dict[str, Any]:
    return {"source": source, "env": env, "complete": True, **more}


# -- probes ---------------------------------------------------------------------------------------------------------

def _root_with_pid(tmp_path: Path, pid: int, env: bytes, comm: str = "ollama") -> Path:
    d = tmp_path / "proc" / str(pid)
    d.mkdir(parents=True)
    (d / "environ").write_bytes(env)
    (d / "comm").write_text(comm + "\n")
    return tmp_path


def test_pid_environ_is_read_and_allow_listed(tmp_path: Path) -> None:
    root = _root_with_pid(tmp_path, 4242, b"HOME=/root\0HSA_OVERRIDE_GFX_VERSION=10.3.0\0SECRET_TOKEN=x\0"
                          b"ROCR_VISIBLE_DEVICES=0\0LD_LIBRARY_PATH=/opt/rocm/lib\0")
    sec = Collector(root=str(root), runtime=False, environ={}, workload_pid=4242).workload_env()
    assert sec == {"source": "pid 4242", "complete": True, "command": "ollama",
                   "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "LD_LIBRARY_PATH": "/opt/rocm/lib",
                           "ROCR_VISIBLE_DEVICES": "0"}}


def test_pid_missing_and_unreadable(tmp_path: Path) -> None:
    assert Collector(root=str(tmp_path), runtime=False, environ={}, workload_pid=7).workload_env() == {
        "source": "pid 7", "error": "no process 7", "missing": True}

    def denied(path: str) -> bytes | None:
        raise PermissionError(13, "Permission denied")

    sec = workload.read_pid(1, denied)
    assert sec["permission"] is True
    f = _check({**load_scenario("rx7900xtx-healthy"), "workload_env": sec})
    assert [x.severity.value for x in f] == ["skip"]
    assert "permission denied" in f[0].title and "sudo rocm-triton-doctor check --pid 1" in f[0].detail


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_pid_unreadable_file_on_disk(tmp_path: Path) -> None:
    root = _root_with_pid(tmp_path, 9, b"HSA_XNACK=1\0")
    (root / "proc/9/environ").chmod(0)
    sec = Collector(root=str(root), runtime=False, environ={}, workload_pid=9).workload_env()
    assert sec and sec.get("permission") is True


def _fake_systemctl(tmp_path: Path, out: str, rc: int = 0, sleep: float = 0) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "systemctl"
    (tmp_path / "out.txt").write_text(out)
    script.write_text(f"#!{sys.executable}\nimport sys, time\ntime.sleep({sleep})\n"
                      f"assert sys.argv[1:3] == ['show', sys.argv[2]] and '-p' in sys.argv\n"
                      f"sys.stdout.write(open({str(tmp_path / 'out.txt')!r}).read())\nsys.exit({rc})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PATH": str(bindir)}


def test_unit_environment_and_files(tmp_path: Path) -> None:
    env = _fake_systemctl(tmp_path, SHOW)
    (tmp_path / "etc/default").mkdir(parents=True)
    # EnvironmentFile= overrides Environment= (systemd.exec(5)); comments and quotes as systemd reads them
    (tmp_path / "etc/ollama.env").write_text("# comment\nHSA_XNACK=1\nHSA_OVERRIDE_GFX_VERSION=\"10.3.0\"\n")
    sec = Collector(root=str(tmp_path), runtime=False, environ=env, workload_unit="ollama.service").workload_env()
    assert sec == {"source": "unit ollama.service", "complete": True, "files": ["/etc/default/ollama", "/etc/ollama.env"],
                   "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_XNACK": "1", "LD_LIBRARY_PATH": "/opt/a b"}}


def test_unit_required_file_missing_makes_it_incomplete(tmp_path: Path) -> None:
    env = _fake_systemctl(tmp_path, SHOW)
    sec = Collector(root=str(tmp_path), runtime=False, environ=env, workload_unit="ollama.service").workload_env()
    assert sec and sec["complete"] is False and sec["unread"] == [
        "/etc/ollama.env: missing (the unit fails to start without it)"]


def test_unit_not_found_timeout_and_bad_name(tmp_path: Path) -> None:
    env = _fake_systemctl(tmp_path, "LoadState=not-found\nEnvironment=\n")
    c = Collector(root=str(tmp_path), runtime=False, environ=env, workload_unit="nope.service", timeout=5)
    assert c.workload_env() == {"source": "unit nope.service", "error": "no unit nope.service", "missing": True}
    assert "not a systemd unit name" in str(workload.read_unit("a;rm -rf /", c.runner, env, c._read_bytes, 1)["error"])
    slow = tmp_path / "slow"
    slow.mkdir()
    env = _fake_systemctl(slow, SHOW, sleep=5)
    sec = Collector(root=str(tmp_path), runtime=False, environ=env, workload_unit="x.service", timeout=0.5).workload_env()
    assert sec and "timed out" in str(sec["error"])


def test_parse_show_formats() -> None:
    env, files = workload.parse_show(SHOW + "EnvironmentFiles=-/etc/opt\n")
    assert env == {"OLLAMA_HOST": "0.0.0.0", "HSA_XNACK": "0", "LD_LIBRARY_PATH": "/opt/a b"}
    assert files == [("/etc/default/ollama", True), ("/etc/ollama.env", False), ("/etc/opt", True)]


# -- the check --------------------------------------------------------------------------------------------------------

def test_override_in_shell_missing_in_unit_fails_with_dropin() -> None:
    snap = {**load_scenario("gfx1032-override-set"), "workload_env": _wl({})}
    f = _check(snap)
    assert [x.severity.value for x in f] == ["fail"]
    assert f[0].title == "HSA_OVERRIDE_GFX_VERSION: this shell has 10.3.0, unit ollama.service has unset"
    assert f[0].fix and "sudo systemctl edit ollama.service" in f[0].fix.text
    assert 'Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0"' in f[0].fix.commands[1]
    assert f[0].fix.commands[-1] == "sudo systemctl daemon-reload && sudo systemctl restart ollama.service"
    assert violations(build_facts(snap), f[0]) == []


def test_override_not_recommended_when_build_has_target() -> None:
    # rx7900xtx: torch carries gfx1100 natively, so an 11.0.0 override in the shell is not "right": say what differs,
    # recommend nothing
    snap = load_scenario("rx7900xtx-healthy")
    snap["env"] = {**snap["env"], "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    f = _check({**snap, "workload_env": _wl({}, source="pid 77")})
    assert [x.severity.value for x in f] == ["warn"] and f[0].fix is None


def test_override_of_another_family_not_recommended() -> None:
    snap = load_scenario("gfx1032-override-set")
    snap["env"] = {**snap["env"], "HSA_OVERRIDE_GFX_VERSION": "9.0.0"}
    f = _check({**snap, "workload_env": _wl({})})
    assert [x.severity.value for x in f] == ["warn"] and f[0].fix is None


def test_workload_has_the_right_override_shell_not() -> None:
    snap = load_scenario("gfx1031-needs-override")
    f = _check({**snap, "workload_env": _wl({"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})})
    assert [x.severity.value for x in f] == ["info"]


def test_visible_devices_differ_warns_with_pid_fix() -> None:
    snap = load_scenario("rx7900xtx-healthy")
    snap["env"] = {**snap["env"], "HIP_VISIBLE_DEVICES": "0"}
    f = _check({**snap, "workload_env": _wl({"HIP_VISIBLE_DEVICES": "1"}, source="pid 99", command="python3")})
    assert [x.severity.value for x in f] == ["warn"]
    assert f[0].title == "HIP_VISIBLE_DEVICES: this shell has 0, pid 99 has 1"
    assert f[0].fix and "python3 (pid 99)" in f[0].fix.text and f[0].fix.commands == ("systemctl status 99",)


def test_library_path_differs_is_info_and_same_is_ok() -> None:
    snap = load_scenario("rx7900xtx-healthy")
    f = _check({**snap, "workload_env": _wl({"LD_LIBRARY_PATH": "/opt/rocm/lib"})})
    assert [x.severity.value for x in f] == ["info"]
    snap["env"] = {**snap["env"], "HSA_XNACK": "1"}
    f = _check({**snap, "workload_env": _wl({"HSA_XNACK": "1"})})
    assert [x.severity.value for x in f] == ["ok"] and "HSA_XNACK" in f[0].detail


def test_unknown_absent_and_incomplete() -> None:
    snap = load_scenario("rx7900xtx-healthy")
    assert [(x.severity.value, x.title) for x in _check(snap)] == [("skip", "no workload named")]
    assert [x.severity.value for x in _check({**snap, "workload_env": None})] == ["skip"]
    part = _wl({}, unread=["/etc/x: contents not shown"])
    part["complete"] = False
    snap["env"] = {**snap["env"], "HSA_XNACK": "1"}
    f = _check({**snap, "workload_env": part})
    assert [x.severity.value for x in f] == ["info"] and "HSA_XNACK" in f[0].title  # unknown, not "unset"


# -- pasted text ------------------------------------------------------------------------------------------------------

def test_pasted_systemctl_show_is_the_workload_not_the_shell() -> None:
    snap = snapshot_from_text([("$ systemctl show ollama -p Environment -p EnvironmentFiles\n"
                               "Environment=HSA_OVERRIDE_GFX_VERSION=10.3.0 OLLAMA_HOST=0.0.0.0\nEnvironmentFiles=\n")])
    assert snap["workload_env"] == {"source": "unit ollama", "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
                                    "complete": True}
    assert "HSA_OVERRIDE_GFX_VERSION" not in (snap.get("env") or {})


def test_pasted_environ_and_unit_with_files() -> None:
    snap = snapshot_from_text([("$ cat /proc/1234/environ | tr '\\0' '\\n'\nHOME=/root\nROCR_VISIBLE_DEVICES=1\n"
                               "HSA_OVERRIDE_GFX_VERSION=11.0.0\nPATH=/usr/bin\n")])
    assert snap["workload_env"] == {"source": "pid 1234", "complete": True,
                                    "env": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "ROCR_VISIBLE_DEVICES": "1"}}
    assert "HSA_OVERRIDE_GFX_VERSION" not in (snap.get("env") or {})
    snap = snapshot_from_text(["Environment=HSA_XNACK=1\nEnvironmentFiles=/etc/default/ollama (ignore_errors=yes)\n"])
    assert snap["workload_env"]["complete"] is False and snap["workload_env"]["env"] == {"HSA_XNACK": "1"}


# -- the CLI ----------------------------------------------------------------------------------------------------------

def _cli(*args: str, env: dict[str, str] | None = None) -> Any:
    import subprocess

    root = Path(__file__).resolve().parents[3]
    return subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "check", *args], capture_output=True, text=True,
                          timeout=300, cwd=root, env={**os.environ, "PYTHONPATH": str(root), **(env or {})})


def test_cli_pid_under_root(tmp_path: Path) -> None:
    import json

    root = _root_with_pid(tmp_path, 31337, b"HIP_VISIBLE_DEVICES=1\0")
    res = _cli("--root", str(root), "--pid", "31337", "--no-runtime", "--only", "workload", "--json",
               env={"HIP_VISIBLE_DEVICES": "0"})
    data = json.loads(res.stdout)
    found = [(f["severity"], f["title"]) for f in data["findings"] if f["severity"] != "skip"]
    assert found == [("warn", "HIP_VISIBLE_DEVICES: this shell has 0, pid 31337 has 1")], res.stderr


def test_cli_unit_with_fake_systemctl(tmp_path: Path) -> None:
    env = _fake_systemctl(tmp_path, "LoadState=loaded\nEnvironment=HSA_XNACK=1\nEnvironmentFiles=\n")
    res = _cli("--root", str(tmp_path), "--unit", "ollama.service", "--no-runtime", "--only", "workload",
               env={"PATH": env["PATH"] + os.pathsep + os.environ.get("PATH", ""), "HSA_XNACK": "1"})
    assert "unit ollama.service has this shell's GPU variables" in res.stdout, res.stdout + res.stderr


def test_cli_usage_errors(tmp_path: Path) -> None:
    res = _cli("--pid", "1", "--unit", "x.service")
    assert res.returncode == 2 and "mutually exclusive" in res.stderr
    snap = tmp_path / "s.json"
    snap.write_text("{}")
    res = _cli("--pid", "1", "--snapshot", str(snap))
    assert res.returncode == 2 and "--snapshot" in res.stderr
    res = _cli("--pid", "0")
    assert res.returncode == 2


def test_a_shell_override_does_not_reach_a_systemd_service_shown_in_the_paste() -> None:
    # ollama#6152: ~/.bashrc exports the override; `journalctl -u ollama` shows the server started by systemd.
    text = ["export HSA_OVERRIDE_GFX_VERSION=10.3.0",
            ("journalctl -u ollama\nago 02 20:27:15 host systemd[1]: Started Ollama Service.\n"
            "ago 02 20:27:15 host ollama[78976]: Couldn't find '/usr/share/ollama/.ollama/id_ed25519'.")]
    facts = build_facts(snapshot_from_text(text))
    [f] = [x for x in run_checks(facts, select(["workload-env-differs"])) if x.id == "workload-env-differs"]
    assert f.severity.value == "fail" and "ollama.service" in f.title and f.fix is not None
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.fix.text and f.fix.commands == ()  # GPU not shown: words only


# -- workload-on-cpu: `ollama ps` (ollama-for-amd#87's table) -------------------------------------------------------

_PS_CPU = ("NAME                ID              SIZE     PROCESSOR    UNTIL\n"
           "granite-code:20b    59db7b531bb4    14 GB    100% CPU     4 minutes from now")
_FOUND_9070 = ('time=2025-05-21T11:35:57.935-03:00 level=INFO source=types.go:130 msg="inference compute" id=0 '
               'library=rocm variant="" compute=gfx1201 driver=6.4 name="AMD Radeon RX 9070 XT" total="15.9 GiB" '
               'available="15.8 GiB"')


def _on_cpu(*texts: str) -> list[tuple[str, str]]:
    from rocm_triton_doctor.check.sources import diagnose_text

    rep = diagnose_text(list(texts))
    return [(f.severity.value, f.title) for f in rep.findings if f.id == "workload-on-cpu"]


def test_workload_on_cpu_warns_when_ollama_found_the_gpu_but_runs_on_the_cpu() -> None:
    (sev, title), = _on_cpu(_PS_CPU, _FOUND_9070)
    assert sev == "warn" and "100% on the CPU" in title and "RX 9070 XT" in title
    from rocm_triton_doctor.check.sources import diagnose_text

    f = next(f for f in diagnose_text([_PS_CPU, _FOUND_9070]).findings if f.id == "workload-on-cpu")
    assert f.fix is None or not f.fix.commands  # the cause is in the server log: no command


def test_workload_on_cpu_skips_without_a_gpu_a_gpu_placement_or_a_table() -> None:
    assert [s for s, _ in _on_cpu(_PS_CPU)] == ["skip"]  # no GPU shown: a CPU-only box runs on the CPU
    assert [s for s, _ in _on_cpu(_PS_CPU.replace("100% CPU", "100% GPU"), _FOUND_9070)] == ["skip"]
    assert [s for s, _ in _on_cpu(_PS_CPU.replace("100% CPU", "48%/52% CPU/GPU"), _FOUND_9070)] == ["skip"]
    # the row alone, without `ollama ps` or its header, is not read as its table
    assert [s for s, _ in _on_cpu(_PS_CPU.splitlines()[1], _FOUND_9070)] == ["skip"]

