"""The fault matrix's CLI-contract cells and the CLI defects of the newcomer walk (issue #18).

These need the cli/ package (the command-line layer rewritten for #18): options validated before any work with exit 2
everywhere, non-UTF-8 locales, interrupts and closed pipes mapped to documented exit codes, atomic output writes that
never replace a device node, FIFO or symlink, `smoke --plot` refused up front. Each test names its defect.

Device-node cells use a scratch node made with mknod (root only; skipped otherwise), never the machine's own
/dev/null: a regression must not be able to break the machine running the tests.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.faults.engine import ROOT, SCENARIOS, Case, Fixtures, Result, base_env, problems, run, run_all
from tests.faults.matrix import CANNOT, OK, OK_OR_PROBLEMS, PLAIN

USAGE = frozenset({2})


@pytest.fixture(scope="module")
def latin1(fx: Fixtures) -> str:
    """A real ISO-8859-1 locale (the walk's defect 6), compiled into the fixture tree."""
    loc = Path(fx.base) / "locales"
    loc.mkdir(exist_ok=True)
    res = subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(loc / "en_US.ISO-8859-1")],
                         capture_output=True, text=True, timeout=120)
    if not (loc / "en_US.ISO-8859-1").exists():
        pytest.skip(f"cannot compile an ISO-8859-1 locale here: {res.stderr.strip()[:200]}")
    return str(loc)


# Commands whose normal exit code is 0 on any machine: a closed pipe or a full disk must be the only difference.
QUIET_OK: dict[str, tuple[str, ...]] = {
    "check": ("check", "--list-checks"),
    "install": ("install", "--dry-run"),
    "smoke": ("smoke", "--device", "cpu", "--only", "add_mul"),
    "report": ("report", "--snapshot", "{scenario_amd}", "--no-smoke"),
    "fleet": ("fleet", "{fleet}"),
}


def contract_cells() -> list[Case]:
    out = []
    for cmd, (args, rc) in PLAIN.items():
        # Defect 6: any non-UTF-8 locale ended check, report, fleet and smoke in UnicodeEncodeError (exit 4).
        out.append(Case("locale-ISO-8859-1", cmd, args, rc, env={"LC_ALL": "en_US.ISO-8859-1", "LANG": "en_US.ISO-8859-1",
                                                                 "LOCPATH": "{locpath}"},
                        timeout=150 if cmd == "smoke" else 90))
    for cmd, args in QUIET_OK.items():
        # Defect 13: `check | head -1` gave exit 1 ("problems"); a closed pipe is not a problem with the machine.
        out.append(Case("stdout-closed-pipe", cmd, args, frozenset({0, 141}), stdout="closed",
                        timeout=150 if cmd == "smoke" else 90))
        # Defect 13: `check > /dev/full` was "internal error: OSError ... please report it", exit 4.
        out.append(Case("stdout-dev-full", cmd, args, CANNOT, stdout="full", one_line_error=True,
                        has=("No space left on device",), timeout=150 if cmd == "smoke" else 90))
    # Defect 4: --save-snapshot replaced a device node or a symlink with a regular file. Written through instead.
    for target in ("devnode", "symlink"):
        out.append(Case(f"output-{target}", "check", ("check", "--no-runtime", "--save-snapshot", f"{{{target}_check}}"),
                        OK_OR_PROBLEMS, unchanged=(f"{{{target}_check}}",)))
        out.append(Case(f"output-{target}", "report", ("report", "--snapshot", "{scenario_amd}", "--no-smoke", "-o",
                                                       f"{{{target}_report}}"), OK, unchanged=(f"{{{target}_report}}",)))
        out.append(Case(f"output-{target}", "smoke", ("smoke", "--device", "cpu", "--only", "add_mul", "--save",
                                                      f"{{{target}_smoke}}"), OK, unchanged=(f"{{{target}_smoke}}",),
                        timeout=150))
        # install writes --lock only after a verified install; with --dry-run the option is refused before any work
        # (exit 2, issue #18 §6), and the node or link is left exactly as it was.
        out.append(Case(f"output-{target}", "install", ("install", "--snapshot", "{scenario_amd}", "--dry-run", "--lock",
                                                        f"{{{target}_install}}"), USAGE,
                        unchanged=(f"{{{target}_install}}",)))
    for cmd, args in (("check", ("check", "--no-runtime", "--save-snapshot", "{work}")),
                      ("report", ("report", "--snapshot", "{scenario_amd}", "--no-smoke", "-o", "{work}")),
                      ("smoke", ("smoke", "--device", "cpu", "--only", "add_mul", "--save", "{work}"))):
        out.append(Case("output-directory", cmd, args, USAGE, one_line_error=True))
    # (torch-import-hang/report, defect 19's missing --runtime-timeout, is a core row now: matrix.broken_stacks.)
    # Defect 8: a corrupt smoke cache blocked `report` (exit 3, no report).
    out.append(Case("corrupt-smoke-cache", "report", ("report", "--snapshot", "{scenario_amd}"), OK,
                    env={"RTD_CACHE_DIR": "{corrupt_cache}"}))
    return out


CELLS = contract_cells()


@pytest.fixture(scope="module")
def outputs(fx: Fixtures) -> dict[str, str]:
    """Scratch device nodes (a char device like /dev/null: 1,3) and symlinks, one per cell."""
    d = Path(fx.base) / "outputs"
    d.mkdir(exist_ok=True)
    made: dict[str, str] = {}
    for cmd in ("check", "report", "smoke", "install"):
        node = d / f"null-{cmd}"
        if not node.exists():
            try:
                os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            except PermissionError:
                pytest.skip("creating a scratch device node needs root")
        made[f"devnode_{cmd}"] = str(node)
        target = d / f"target-{cmd}.txt"
        target.write_text("")
        link = d / f"link-{cmd}"
        if not link.is_symlink():
            link.symlink_to(target)
        made[f"symlink_{cmd}"] = str(link)
    return made


@pytest.fixture(scope="module")
def contract_results(request: pytest.FixtureRequest, fx: Fixtures, latin1: str, outputs: dict[str, str]) -> dict[str, Result]:
    from tests.faults.conftest import selected_cases

    fx.paths.update(outputs)
    fx.paths["locpath"] = latin1
    return run_all(selected_cases(request, "cli_contract"), fx)


@pytest.mark.cli_contract
@pytest.mark.parametrize("case", CELLS, ids=[c.id for c in CELLS])
def test_cell(case: Case, contract_results: dict[str, Result], fx: Fixtures) -> None:
    res = contract_results[case.id]
    assert not problems(res, fx), "\n".join(problems(res, fx))
    if case.fault == "output-symlink" and case.command != "install":  # install --dry-run --lock is refused (exit 2)
        target = Path(os.path.realpath(fx.fmt(case.unchanged[0])))
        assert target.stat().st_size > 0, "the output did not go through the symlink to its target"


def cell(fx: Fixtures, *args: str, rc: set[int], **kw: object) -> Result:
    res = run(Case("defect", args[0], args, frozenset(rc), **kw), fx)  # type: ignore[arg-type]
    assert not problems(res, fx), "\n".join(problems(res, fx))
    return res


# Defect 4, the FIFO half: a FIFO is written through (a reader gets the data), never replaced by a regular file.
def test_d04_output_fifo_is_written_through(fx: Fixtures, tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    cell(fx, "check", "--no-runtime", "--save-snapshot", str(fifo), rc={0, 1})
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert got and json.loads(got[0])["schema"].startswith("rocm-triton-doctor/snapshot/")


# Defect 7: `smoke --plot` without matplotlib ran the whole suite, then exited 3 with no table. Refused up front.
def test_d07_plot_without_matplotlib_is_refused_before_running(fx: Fixtures, tmp_path: Path) -> None:
    try:
        import matplotlib  # noqa: F401
        pytest.skip("matplotlib is installed here")
    except ImportError:
        pass
    t0 = time.monotonic()
    res = cell(fx, "smoke", "--device", "cpu", "--only", "add_mul", "--plot", str(tmp_path / "p.png"), rc={2},
               one_line_error=True, has=("matplotlib",))
    assert "PASS" not in res.stdout and time.monotonic() - t0 < 30


# Defect 8, the cache half: a file that is not a smoke result was accepted as one ("Last smoke run: **None**").
def test_d08_report_refuses_a_smoke_file_that_is_no_smoke_result(fx: Fixtures) -> None:
    cell(fx, "report", "--snapshot", "{scenario_amd}", "--smoke", "{scenario_cpu}", rc={3}, one_line_error=True,
         lacks=("**None**",))


# Defect 11: bad install option values crashed (exit 4) or were found late (exit 1).
@pytest.mark.parametrize("opt", [("--torch", "abc"), ("--rocm", "abc"), ("--python", "{notpy}")], ids=lambda o: o[0])
def test_d11_bad_install_options_are_usage_errors(fx: Fixtures, tmp_path: Path, opt: tuple[str, str]) -> None:
    notpy = tmp_path / "notpy"
    notpy.write_text("#!/bin/sh\necho hello\n")
    notpy.chmod(0o755)
    fx.paths["notpy"] = str(notpy)
    cell(fx, "install", "--snapshot", "{scenario_amd}", "--dry-run", *opt, rc={2}, one_line_error=True)


# Defect 12: the same wrong --python gave 1, 3, 2, 1 in four commands; smoke ran whatever --python pointed at.
@pytest.mark.parametrize("cmd", [("check",), ("install", "--dry-run"), ("smoke", "--device", "cpu"),
                                 ("report", "--no-smoke")], ids=lambda c: c[0])
@pytest.mark.parametrize("python", ["/nonexistent/python", "/bin/false"], ids=["missing", "not-python"])
def test_d12_a_wrong_python_is_one_usage_error_everywhere(fx: Fixtures, cmd: tuple[str, ...], python: str) -> None:
    cell(fx, *cmd, "--python", python, rc={2}, one_line_error=True)


# Defect 13: exit codes off contract.
def test_d13_nothing_selected_is_a_usage_error(fx: Fixtures) -> None:
    cell(fx, "check", "--no-runtime", "--only", "torch", "--skip", "torch", rc={2}, one_line_error=True)


def test_d13_install_that_cannot_plan_exits_3(fx: Fixtures) -> None:
    cell(fx, "install", "--snapshot", str(SCENARIOS / "two-triton-dists.json"), "--dry-run", rc={3})


def test_d13_missing_lock_file_is_not_a_problem_with_the_machine(fx: Fixtures, tmp_path: Path) -> None:
    cell(fx, "install", "--from-lock", str(tmp_path / "nope.lock"), "--dry-run", rc={2, 3}, one_line_error=True)


def _signal_mid_run(fx: Fixtures, args: tuple[str, ...], sig: signal.Signals, env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "rocm_triton_doctor", *(fx.fmt(a) for a in args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**base_env(fx), **{k: fx.fmt(v) for k, v in env.items()}}, start_new_session=True)
    time.sleep(4)  # well inside the hung tool or import
    os.killpg(proc.pid, sig)  # as a terminal does: the whole foreground group
    _out, err = proc.communicate(timeout=60)
    return proc.returncode, err


# Defect 13 (Ctrl-C in smoke exited 1, "a wrong result") and the signal rows of the matrix: interrupts map to
# 128+signal, with one line and no traceback, for every long-running command.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.parametrize("cmd", ["check", "report", "smoke"])
def test_d13_interrupt_mid_run(fx: Fixtures, cmd: str, sig: signal.Signals) -> None:
    args, env = {
        "check": (("check", "--no-runtime", "--timeout", "30"), {"PATH": "{bin_hang}"}),
        "report": (("report", "--no-runtime", "--no-smoke"), {"PATH": "{bin_hang}"}),
        "smoke": (("smoke", "--device", "cpu", "--python", "{py_torch_hang}"), {"RTD_IMPORT_TIMEOUT": "60"}),
    }[cmd]
    rc, err = _signal_mid_run(fx, args, sig, env)
    assert rc == 128 + int(sig), (rc, err)
    assert "Traceback" not in err and len([ln for ln in err.splitlines() if ln.strip()]) <= 1, err


# Defect 14: smoke options silently ignored, or bad values reported as kernel failures.
@pytest.mark.parametrize("args", [("--compile-only", "--arch", "gfx942", "--only", "nosuchkernel"),
                                  ("--compile-only", "--arch", "gfx9999"),
                                  ("--compile-only", "--arch", "gfx942;rm -rf"),
                                  ("--device", "cpu", "--only", "swiglu", "--seed", "99999999999999999999")],
                         ids=["unknown-kernel", "unknown-arch", "bad-arch", "seed-overflow"])
def test_d14_bad_smoke_values_are_usage_errors(fx: Fixtures, args: tuple[str, ...]) -> None:
    res = cell(fx, "smoke", *args, rc={2}, one_line_error=True)
    assert "FAILED" not in res.stdout and "cannot generate code" not in res.stdout


# Defect 15: the `max err / tol` column read "0.03 / 2e-02 PASS": a pass must never look like err > tolerance.
def test_d15_passing_rows_do_not_show_an_error_above_the_tolerance(fx: Fixtures) -> None:
    res = cell(fx, "smoke", "--device", "cpu", "--only", "gemm,add_mul", rc={0}, env={"COLUMNS": "200"}, timeout=200)
    for line in res.stdout.splitlines():
        m = re.search(r"PASS\s*│\s*([0-9.e+-]+)\s*/\s*([0-9.e+-]+)", line)
        if m:
            assert float(m.group(1)) <= float(m.group(2)), line


# Defect 16: the --json envelopes were not uniform.
@pytest.mark.parametrize("args", [("check", "--no-runtime", "--json"), ("install", "--dry-run", "--json"),
                                  ("fleet", "{fleet}", "--json"), ("smoke", "--device", "cpu", "--only", "add_mul", "--json"),
                                  ("smoke", "--compile-only", "--arch", "gfx942", "--only", "softmax", "--json")],
                         ids=["check", "install", "fleet", "smoke", "smoke-aot"])
def test_d16_json_envelopes_are_uniform(fx: Fixtures, args: tuple[str, ...]) -> None:
    res = cell(fx, *args, rc={0, 1}, timeout=200)
    data = json.loads(res.stdout)
    missing = [k for k in ("schema", "command", "status", "exit_code", "tool_version") if k not in data]
    assert not missing, f"{args[0]}: envelope lacks {missing}"
    if "--compile-only" in args:
        # Defect 14: --compile-only honours --only (it had walked 11 of everything). An AOT row's `kernel` names the
        # compiled variant ("softmax bf16 N=8192", smoke-aot/1 as documented in docs/smoke.md), so every row must be a
        # softmax variant and there must be some. (One run for both checks: CI time.)
        kernels = {str(r.get("kernel")) for r in data.get("results", [])}
        assert kernels and {k.split()[0] for k in kernels} == {"softmax"}, kernels


# Defect 19, the cosmetics a newcomer trips on.
def test_d19_help_and_titles_read_cleanly(fx: Fixtures) -> None:
    assert "%%" not in cell(fx, "smoke", "--help", rc={0}).stdout
    res = cell(fx, "smoke", "--device", "cpu", "--only", "add_mul", rc={0}, timeout=150)
    assert "(interpreter (CPU))" not in res.stdout


def test_d19_a_bogus_home_is_not_created(fx: Fixtures, tmp_path: Path) -> None:
    bogus = tmp_path / "nonexistent-home"
    cell(fx, "smoke", "--device", "cpu", "--only", "add_mul", rc={0}, env={"HOME": str(bogus), "RTD_CACHE_DIR": None},
         timeout=150)
    assert not bogus.exists()



def test_an_interrupt_that_a_c_extension_turned_into_another_error_stays_an_interrupt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C while torch's extension loads surfaced as ImportError ('cannot load module more than once per process')
    # and smoke said "cannot import torch", exit 3 (seen under load in tests/cli/test_contracts.py's Ctrl-C test).
    import signal

    from rocm_triton_doctor.cli import _exits
    from rocm_triton_doctor.smoke.runner import _reraise_if_interrupted

    monkeypatch.setattr(_exits, "RECEIVED", [])
    _reraise_if_interrupted()  # nothing received: nothing raised
    monkeypatch.setattr(_exits, "RECEIVED", [int(signal.SIGINT)])
    with pytest.raises(KeyboardInterrupt):
        _reraise_if_interrupted()
    monkeypatch.setattr(_exits, "RECEIVED", [int(signal.SIGTERM)])
    with pytest.raises(_exits.Terminated):
        _reraise_if_interrupted()
