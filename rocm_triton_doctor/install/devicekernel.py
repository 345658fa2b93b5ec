"""`install`'s last proof (issue #15 item 3): one tiny kernel per visible device, in the target interpreter.

An import that works and `is_available()` True prove little: TheRock's multi-arch wheel without its device extra
imports fine and fails every kernel with hipErrorInvalidImage; a wheel whose libraries lack the GPU's gfx fails with
hipErrorNoBinaryForGpu at the first kernel. So `verify` runs `torch.ones(8, device=d) + 1` and a one-program Triton
kernel on each device (on a machine without a GPU: torch on the CPU and Triton's interpreter), in a subprocess
with a timeout. The script prints a start line per device before it runs anything there, so a hang names the device.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from rocm_triton_doctor.check.findings import Finding, Fix, Severity
from rocm_triton_doctor.check.probes.runner import Runner, run_command

ID = "verify-device-kernel"
MARK = "@@RTD-DEVKERNEL@@"
TIMEOUT = 180.0  # first Triton compile on a cold cache takes tens of seconds per device

SCRIPT = r"""
import json, os, sys
MARK = "@@RTD-DEVKERNEL@@"
def say(**kw):
    print(MARK + json.dumps(kw), flush=True)
import torch
n = torch.cuda.device_count() if torch.cuda.is_available() else 0
devices = ["cuda:%d" % i for i in range(n)] or ["cpu"]
if not n:
    os.environ["TRITON_INTERPRET"] = "1"  # read when kernels are decorated: before importing triton
try:
    import triton, triton.language as tl
    @triton.jit
    def _add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)
    terr = None
except ModuleNotFoundError as e:
    terr = "" if e.name == "triton" else "%s: %s" % (type(e).__name__, e)  # "": not installed (triton-missing says it)
except Exception as e:
    terr = "%s: %s" % (type(e).__name__, e)
for d in devices:
    name = torch.cuda.get_device_name(int(d[5:])) if d != "cpu" else "cpu"
    say(event="start", device=d, name=name)
    try:
        x = torch.ones(8, device=d) + 1
        if d != "cpu":
            torch.cuda.synchronize(d)
        good = bool((x == 2).all().item())
        say(event="torch", device=d, ok=good, error=None if good else "torch.ones(8) + 1 gave %s" % x.tolist())
    except Exception as e:
        say(event="torch", device=d, ok=False, error="%s: %s" % (type(e).__name__, str(e)[:500]))
        continue
    if terr is not None:
        say(event="triton", device=d, ok=None if terr == "" else False, error="import triton: " + (terr or "not installed")[:500])
        continue
    try:
        y = torch.zeros(8, device=d)
        _add_one[(1,)](y, 8, BLOCK=8)
        if d != "cpu":
            torch.cuda.synchronize(d)
        good = bool((y == 1).all().item())
        say(event="triton", device=d, ok=good, error=None if good else "Triton kernel gave %s" % y.tolist())
    except Exception as e:
        say(event="triton", device=d, ok=False, error="%s: %s" % (type(e).__name__, str(e)[:500]))
say(event="done")
"""


def _events(stdout: str) -> list[dict[str, object]]:
    out = []
    for line in stdout.splitlines():
        if line.startswith(MARK):
            try:
                ev = json.loads(line[len(MARK):])
            except json.JSONDecodeError:
                continue
            if isinstance(ev, dict):
                out.append(ev)
    return out


def _f(sev: Severity, title: str, detail: str = "", fix: Fix | None = None) -> Finding:
    return Finding(ID, sev, title, detail, (), fix, group="verify")


def run(python: str, environ: Mapping[str, str], runner: Runner = run_command,
        timeout: float = TIMEOUT) -> tuple[list[Finding], list[str]]:
    """(findings, the devices that failed: "cuda:1 (AMD Radeon RX 6700 XT)")."""
    env = {k: v for k, v in environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("PYTHONIOENCODING", "utf-8")
    res = runner([python, "-c", SCRIPT], timeout, env)
    events = _events(res.stdout)
    names = {str(e["device"]): f"{e['device']} ({e.get('name')})" for e in events if e.get("event") == "start"}
    findings: list[Finding] = []
    failed: list[str] = []
    results: dict[str, list[dict[str, object]]] = {}
    for e in events:
        if e.get("event") in ("torch", "triton"):
            results.setdefault(str(e["device"]), []).append(e)
    for dev, label in names.items():
        evs = results.get(dev, [])
        bad = [e for e in evs if e.get("ok") is False]
        if bad:
            failed.append(label)
            what = "torch" if bad[0].get("event") == "torch" else "Triton"
            findings.append(_f(Severity.FAIL, f"a tiny {what} kernel failed on {label}", str(bad[0].get("error") or ""),
                               Fix("Run `rocm-triton-doctor check` in this environment: the code-object audit and "
                                   "the override checks say what this device lacks.")))
        elif len(evs) == 2:
            no_triton = any(e.get("ok") is None for e in evs)
            what = "ran (Triton is not installed)" if no_triton else "and a Triton kernel ran"
            findings.append(_f(Severity.OK, f"torch {what} on {label}"))
        elif res.timed_out:  # started but never finished: the timeout hit while this device was running
            failed.append(label)
            findings.append(_f(Severity.FAIL, f"a tiny kernel on {label} did not finish within {timeout:.0f} s",
                               "A kernel that hangs usually means code for another GPU (a wrong HSA override) or a "
                               "wedged driver; see `dmesg | grep -i amdgpu`."))
        else:  # the process died while this device was running (a GPU fault aborts it: SIGABRT/SIGSEGV)
            failed.append(label)
            why = res.crashed or f"exit {res.returncode}"
            tail = (res.stderr.strip().splitlines() or [""])[-1][:500]
            findings.append(_f(Severity.FAIL, f"the test process died ({why}) running a tiny kernel on {label}", tail))
    if not names:
        if res.missing:
            msg = f"interpreter not found: {python}"
        elif res.timed_out:
            msg = f"no device was reached within {timeout:.0f} s (import torch hung)"
        else:
            msg = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1][:500]
        failed.append("all devices")
        findings.append(_f(Severity.FAIL, "the device-kernel test could not run", msg))
    return findings, failed
