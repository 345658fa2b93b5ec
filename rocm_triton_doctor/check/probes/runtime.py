"""Run the runtime probe (scripts/runtime_probe.py) in a target interpreter and say truthfully how it went.

Shared by `check` (the `runtime` snapshot section) and `smoke` (its preflight), so that both tell a torch that
raises, segfaults or hangs at import the same way: the probe prints a stage line before each risky step, and when
the process never reaches its result line the last stage names what died ("import torch was killed by SIGSEGV",
"import torch hung for 30 s").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocm_triton_doctor.check.probes.runner import CommandResult, Runner, crash_signal, run_command, signal_name

SCRIPT = Path(__file__).with_name("scripts") / "runtime_probe.py"
MARKER = "@@RTD-RUNTIME@@"
STAGE = "@@RTD-STAGE@@"
PARTIAL = "@@RTD-PARTIAL@@"


def probe_env(environ: Mapping[str, str]) -> dict[str, str]:
    env = dict(environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.pop("TRITON_INTERPRET", None)  # the runtime probe must see the real backend
    env["PYTHONWARNINGS"] = "ignore"  # third-party import warnings are noise here (issue #18, defect 1)
    return env


def run_probe(python: str, timeout: float, environ: Mapping[str, str], runner: Runner = run_command,
              extra_path: Sequence[str] = ()) -> dict[str, Any]:
    """`extra_path` is appended to the child's sys.path (as `smoke --python` appends the doctor's own paths after
    re-executing itself), so the child sees the same packages as the process that will import them."""
    argv = [python, str(SCRIPT)]
    if extra_path:
        argv = [python, "-c", (f"import sys, runpy; sys.path.extend({list(extra_path)!r}); "
                              f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')")]
    res = runner(argv, timeout, probe_env(environ))
    return parse(res, timeout)


def parse(res: CommandResult, timeout: float) -> dict[str, Any]:
    """The probe's JSON result, or a result dict whose `error` says how the probe died and at which step."""
    if res.missing:
        return {"error": f"interpreter not found: {res.argv[0]}"}
    if res.error:
        return {"error": f"cannot run {res.argv[0]}: {res.error}"}
    text = res.stdout or ""
    if MARKER in text:
        line = text.rsplit(MARKER, 1)[1].strip().splitlines()
        try:
            data = json.loads(line[0]) if line else None
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            return data
    stage = _last(text, STAGE)
    out: dict[str, Any] = {}
    partial = _last(text, PARTIAL)
    if partial:
        try:
            loaded = json.loads(partial)
            if isinstance(loaded, dict):
                out.update(loaded)
        except json.JSONDecodeError:
            pass
    what = stage or "the runtime probe"
    if res.timed_out:
        out["error"] = f"{what} hung for {timeout:.0f} s (stopped at the runtime timeout)"
        # torch's facts survive a Triton hang (the partial result): only a hang before them is a torch timeout.
        out["timed_out" if stage not in ("import triton", "triton driver") else "triton_timed_out"] = True
    else:
        sig = crash_signal(res.returncode)
        if sig:
            out["error"] = f"{what} was killed by {sig}"
            out["crashed"] = sig
        elif res.returncode is not None and res.returncode != 0:
            tail = (res.stderr.strip().splitlines() or ["no output"])[-1][:500]
            out["error"] = f"{what} exited with code {res.returncode}: {tail}"
        else:
            tail = (res.stderr.strip().splitlines() or ["no output"])[-1][:500]
            out["error"] = f"probe gave no result (exit {res.returncode}): {tail}"
            return out  # not a Python that ran our script (e.g. a shell script named python)
        out["returncode"] = res.returncode
        out["stderr_tail"] = res.stderr[-4000:]
    if stage == "import torch":
        out["torch_import_failed"] = True
        out["torch_imported"] = False
    elif stage == "import triton":
        out["triton_imported"] = False
        out["triton_import_error"] = out["error"]
    return out


def _last(text: str, prefix: str) -> str | None:
    hits = [ln[len(prefix):].strip() for ln in text.splitlines() if ln.startswith(prefix)]
    return hits[-1] if hits else None


def died_how(returncode: int | None) -> str:
    """'killed by SIGSEGV' / 'exited with code 1': for messages about any child."""
    sig = crash_signal(returncode)
    if sig:
        return f"killed by {sig}"
    if isinstance(returncode, int) and returncode < 0:
        return f"killed by {signal_name(-returncode)}"
    return f"exited with code {returncode}"
