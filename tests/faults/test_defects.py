"""One test per defect of the newcomer walk (../shared/research/newcomer-walk.md) that the core fixes: each failed on
the code at the start of issue #18 and passes after. The CLI-contract defects are in test_cli_contract.py; the
SIGTERM/SIGHUP install defect (10) is in test_install_signals.py."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from rocm_triton_doctor.check import diagnose
from rocm_triton_doctor.check.checks import by_id
from rocm_triton_doctor.check.findings import Severity
from tests.faults.engine import ROOT, SCENARIOS, Case, Fixtures, base_env, problems, run


def cell(fx: Fixtures, *args: str, rc: set[int], **kw: object) -> str:
    """Run one case now; fail with everything wrong about it; return stdout + stderr."""
    res = run(Case("defect", args[0], args, frozenset(rc), **kw), fx)  # type: ignore[arg-type]
    assert not problems(res, fx), "\n".join(problems(res, fx))
    return res.stdout + res.stderr


def by_check(report: object, check_id: str) -> list[object]:
    return [f for f in report.findings if f.id == check_id]  # type: ignore[attr-defined]


# Defect 1: on a CPU-only machine install -> smoke -> check went round in a circle: the CPU torch brings no Triton,
# check said "✓ Triton is not installed", install printed "Next: smoke", smoke stopped for want of Triton.
def test_d01_cpu_journey_says_smoke_needs_triton(fx: Fixtures) -> None:
    snap = json.loads((SCENARIOS / "cpu-only.json").read_text())
    dists = snap["python"]["distributions"]
    for n in [n for n in dists if "triton" in n]:
        del dists[n]
    snap["python"]["triton_owners"] = []
    snap.pop("runtime", None)
    report = diagnose(snap, [by_id()["triton-missing"]])
    (f,) = by_check(report, "triton-missing")
    assert f.severity is Severity.WARN and "smoke" in f.title and "pip install triton" in f.fix.commands[0]  # type: ignore[attr-defined]
    from rocm_triton_doctor.install.command import _next_command
    from rocm_triton_doctor.install.plan import Options, make_plan
    from rocm_triton_doctor.check.facts import build_facts

    plan = make_plan(build_facts(snap), Options(), "3.11.7", sys.executable)
    assert "pip install triton" in " ".join(plan.notes)
    nxt = _next_command(plan, "/venv/bin/python", diagnose(snap, [by_id()["triton-import"]]))
    assert nxt.startswith("/venv/bin/python -m pip install triton")


def test_d01_smoke_without_triton_says_how_to_get_it(fx: Fixtures, tmp_path: Path) -> None:
    """The preflight names the missing Triton and the command that installs it, in one line, exit 3."""
    site = tmp_path / "site"
    (site / "triton").mkdir(parents=True)
    (site / "triton" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'triton'\", name='triton')\n")
    py = tmp_path / "python"
    py.write_text(f'#!/bin/sh\nPYTHONPATH="{site}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n')
    py.chmod(0o755)
    out = cell(fx, "smoke", "--device", "cpu", "--python", str(py), rc={3}, one_line_error=True)
    assert "cannot import triton" in out


def test_d01_import_warnings_do_not_leak(fx: Fixtures, tmp_path: Path) -> None:
    """torch's 'Failed to initialize NumPy' UserWarning reached the smoke user; third-party warnings are hidden."""
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(
        "import warnings\nwarnings.warn('Failed to initialize NumPy: _ARRAY_API not found', UserWarning)\n"
        "__version__ = '2.13.0+cpu'\nclass version:\n    hip = None\n    cuda = None\n"
        "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n")
    (site / "triton").mkdir()
    (site / "triton" / "__init__.py").write_text("import warnings\nwarnings.warn('triton says hi', UserWarning)\n"
                                                  "__version__ = '3.9.0'\n")
    env = {**base_env(fx), "PYTHONPATH": f"{site}:{ROOT}"}
    res = subprocess.run([sys.executable, "-c", ("from rocm_triton_doctor.smoke.runner import import_stack; "
                          "t, tr = import_stack('cpu'); print(t.__version__, tr.__version__)")],
                         capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert res.returncode == 0 and res.stdout.split() == ["2.13.0+cpu", "3.9.0"], res.stderr
    assert "Warning" not in res.stderr, res.stderr


# Defect 2: check never imported a CPU torch or any Triton: a torch whose import raises or segfaults was "runs on
# the CPU", HEALTHY, exit 0; a Triton whose import raises was "✓ Triton installed", HEALTHY.
def test_d02_broken_imports_are_failures(fx: Fixtures) -> None:
    for py, says in (("{py_torch_raise}", "undefined symbol"), ("{py_torch_segv}", "import torch was killed by SIGSEGV"),
                     ("{py_triton_raise}", "`import triton` fails")):
        lacks = ("HEALTHY",) + (("torch 2.13.0+cpu runs on the CPU",) if "torch" in py else ("✓ Triton 3",))
        out = cell(fx, "check", "--python", py, "--runtime-timeout", "60", rc={1}, has=(says,), lacks=lacks)
        assert "Verdict: PROBLEMS" in out


# Defect 3: smoke --python with a torch that segfaults killed the doctor (exit 139, no word); one that hangs hung it.
def test_d03_smoke_survives_a_torch_that_segfaults_or_hangs(fx: Fixtures) -> None:
    cell(fx, "smoke", "--device", "cpu", "--python", "{py_torch_segv}", rc={3}, one_line_error=True,
         has=("killed by SIGSEGV",))
    cell(fx, "smoke", "--device", "cpu", "--python", "{py_torch_hang}", rc={3}, one_line_error=True,
         env={"RTD_IMPORT_TIMEOUT": "3"}, has=("hung for 3 s",), timeout=60)


# Defect 5: fleet called a could-not-check node "ok" (--strict exit 0); one empty file aborted the whole fleet.
def test_d05_fleet_counts_unchecked_and_unreadable_nodes(fx: Fixtures, tmp_path: Path) -> None:
    d = tmp_path / "fleet"
    d.mkdir()
    for f in Path(fx.paths["fleet"]).glob("*.json"):
        (d / f.name).write_text(f.read_text())
    empty = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "check", "--snapshot", fx.paths["snap_schema_only"],
                            "--json"], capture_output=True, text=True, timeout=60, env=base_env(fx), cwd=ROOT)
    (d / "node3.json").write_text(empty.stdout)
    (d / "downhost.json").write_text("")
    out = cell(fx, "fleet", str(d), "--json", rc={1})
    nodes = {n["name"]: n for n in json.loads(out[:out.rindex("}") + 1])["nodes"]}
    assert nodes["node3"]["status"] == "fail" and nodes["downhost"]["status"] == "fail"
    assert nodes["node-a"]["status"] == "ok"


# Defect 8 (the redaction half): report built from a loaded snapshot printed HF_TOKEN, AWS_SECRET_ACCESS_KEY and URL
# passwords in its default, redacted output.
def test_d08_report_from_a_loaded_snapshot_leaks_no_secret(fx: Fixtures) -> None:
    out = cell(fx, "report", "--snapshot", "{snap_secrets}", "--no-smoke", rc={0, 1}, lacks=Fixtures.SECRET_VALUES)
    assert '"HF_TOKEN": "<redacted>"' in out


# Defect 9: the doctor counted itself as a Triton distribution ("| Triton | rocm-triton-doctor 0.1.0 |"), and fleet
# showed Triton drift between a node with the doctor and one without.
def test_d09_the_doctor_is_no_triton(fx: Fixtures) -> None:
    cell(fx, "fleet", "{fleet}", "--strict", rc={0}, lacks=("rocm-triton-doctor 0.1",))
    env = dict(base_env(fx))
    res = subprocess.run([sys.executable, str(ROOT / "rocm_triton_doctor/check/probes/scripts/pyenv_probe.py")],
                         capture_output=True, text=True, timeout=60, env=env)
    data = json.loads(res.stdout)
    assert "rocm-triton-doctor" not in data["distributions"] and "rocm-triton-doctor" not in data["triton_owners"]


# Defect 13 (the empty-snapshot part): a snapshot holding only `schema` was "✓ no external tools needed", HEALTHY.
def test_d13_schema_only_snapshot_is_could_not_check(fx: Fixtures) -> None:
    cell(fx, "check", "--snapshot", "{snap_schema_only}", rc={3}, has=("COULD-NOT-CHECK",), lacks=("HEALTHY",))


# Defect 17: wrong types one level inside a section became nonsense findings ("torch is not installed in 5").
def test_d17_wrong_nested_types_are_a_clear_error(fx: Fixtures) -> None:
    out = cell(fx, "check", "--snapshot", "{snap_nested_python-executable}", rc={3}, one_line_error=True,
               lacks=("is not installed in 5",))
    assert "python.executable must be a string or null, got number" in out
    cell(fx, "check", "--snapshot", "{snap_nested_env-list}", rc={3}, one_line_error=True, lacks=("['x']",))


# Defect 18: a ROCm tool that segfaults counted as "answered", live and in a loaded snapshot.
def test_d18_a_crashing_tool_is_reported_as_crashed(fx: Fixtures, tmp_path: Path) -> None:
    cell(fx, "check", "--no-runtime", rc={0, 1}, env={"PATH": "{bin_crash}"}, has=("rocminfo crashed (killed by SIGSEGV)",),
         lacks=("tool(s) answered",))
    snap = json.loads((SCENARIOS / "rx7900xtx-healthy.json").read_text())
    for c in snap["commands"].values():
        if isinstance(c, dict):
            c["returncode"] = -11
    (tmp_path / "segv.json").write_text(json.dumps(snap))
    cell(fx, "check", "--snapshot", str(tmp_path / "segv.json"), rc={0, 1}, has=("crashed (killed by SIGSEGV)",),
         lacks=("tool(s) answered",))


# Defect 19 (the README's first command): the doctor inspected its own venv, which has no torch, so a newcomer's first
# verdict was "torch is not installed" with a bare `pip install`. Now it finds the project's .venv that has torch.
def test_d19_a_doctor_without_torch_finds_the_venv_that_has_it(fx: Fixtures, tmp_path: Path) -> None:
    doctor_venv = tmp_path / "doctor-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(doctor_venv)], check=True, timeout=120)
    deps = tmp_path / "deps"
    deps.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for name in ("click", "rich", "packaging", "markdown_it", "mdurl", "pygments"):
        if (site / name).exists():
            (deps / name).symlink_to(site / name)
    project = tmp_path / "project"
    bindir = project / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (bindir / "python").chmod(0o755)
    tsite = project / ".venv" / "lib" / "python3.11" / "site-packages"
    (tsite / "torch").mkdir(parents=True)
    (tsite / "torch" / "__init__.py").write_text("")
    (tsite / "torch-2.13.0+cpu.dist-info").mkdir()
    env = {**base_env(fx), "PYTHONPATH": f"{ROOT}:{deps}", "PATH": "/usr/bin:/bin"}
    env.pop("VIRTUAL_ENV", None)
    res = subprocess.run([str(doctor_venv / "bin" / "python"), "-m", "rocm_triton_doctor", "check", "--no-runtime"],
                         capture_output=True, text=True, timeout=120, env=env, cwd=project)
    assert "Traceback" not in res.stderr, res.stderr
    assert f"inspected {bindir / 'python'}" in res.stdout, res.stdout
    assert "torch is not installed" not in res.stdout and "--python" in res.stdout
