"""`install`, end to end: facts -> plan -> (confirm) -> apply -> verify -> lock. Returns the exit code."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import Any
from collections.abc import Callable

from rocm_triton_doctor.check.checks import SETS, by_id
from rocm_triton_doctor.result import ExitCode, Result
from rocm_triton_doctor.check.facts import Facts, build_facts
from rocm_triton_doctor.install import env as envmod
from rocm_triton_doctor.install import devicekernel, executor, lock
from rocm_triton_doctor.install.plan import CannotTell, NoWheel, Options, Plan, make_plan

VERIFY_CHECKS = SETS["after-install"]
AUDIT_CHECKS = ("codeobject-target-missing", "codeobject-gpu-code")  # issue #15: the new env's binaries carry the GPU


class UsageProblem(Exception):
    """Maps to exit 2 (bad option combination, or a confirmation that cannot be asked)."""


def _facts(python: str, snapshot_path: str | None) -> Facts:
    if snapshot_path:
        from rocm_triton_doctor.check import snapshot

        return build_facts(snapshot.load(snapshot_path))
    from rocm_triton_doctor.check.probes.collect import Collector

    return build_facts(Collector(python=python, runtime=False).collect())


def plan_for(opts: Options, snapshot_path: str | None, from_lock: str | None) -> tuple[Plan, Facts, list[str]]:
    python = opts.python or sys.executable
    facts = _facts(python, snapshot_path)
    extra_notes = []
    if snapshot_path and facts.python.found and facts.python.value and facts.python.value.version:
        py_version = facts.python.value.version
    else:
        py_version, _, _ = envmod.interpreter_paths(python)
        if snapshot_path:
            extra_notes.append(f"The snapshot does not record its Python: planned for Python {py_version} "
                               f"({python}); pass --python to plan for another.")
    pyenv = facts.python.value if facts.python.found else None
    if opts.venv and pyenv and not snapshot_path and not os.path.exists(os.path.expanduser(opts.venv)):
        # A fresh venv starts empty: plan against that, not against the interpreter's own packages.
        empty = replace(pyenv, distributions={}, triton_owners=(), externally_managed=False)
        facts = replace(facts, python=replace(facts.python, value=empty))
    notes: list[str] = []
    if from_lock:
        data = lock.read(from_lock)
        plan = make_plan(facts, replace(opts, torch=data["packages"]["torch"], index_url=opts.index_url or
                                        data.get("index_url")), py_version, python)
        notes = lock.compatible(data, plan.platform, py_version, facts)
        plan.installs = [f"{n}=={v}" for n, v in data["packages"].items()]
        plan.env = {**plan.env, **(data.get("env") or {})}
        plan.notes += [f"From lock {from_lock} (created {data.get('created')})"] + notes
    else:
        plan = make_plan(facts, opts, py_version, python)
    plan.notes += extra_notes
    return plan, facts, notes


def show(plan: Plan, console: Any) -> None:
    from rich.text import Text

    where = f"new virtual environment {plan.venv}" if plan.venv else f"the environment of {plan.python}"
    console.print(Text(f"Install plan ({plan.platform.upper()} machine, Python {plan.python_version}) into {where}:",
                       style="bold"))
    src = ("wheelhouse " + str(plan.find_links) + " (offline)") if plan.offline else (plan.index_url or "PyPI")
    console.print(f"  install  {' '.join(plan.installs)}")
    console.print(f"  from     {src}" + (f" + {plan.find_links}" if plan.find_links and not plan.offline else ""))
    if plan.triton:
        console.print(f"  Triton   {plan.triton} (torch's own pin, from the same index)")
    for s in plan.removals:
        console.print(f"  remove   {s.name}: {s.reason}")
    for k, v in plan.env.items():
        console.print(f"  set      export {k}={v}   (in the shell, systemd unit or container that runs torch)")
    if plan.expected_gfx:
        console.print(f"  expect   torch to see {', '.join(plan.expected_gfx)}")
    for n in plan.notes:
        console.print(Text(f"  note     {n}", style="dim"))


def run(opts: Options, *, dry_run: bool, yes: bool, as_json: bool, lock_path: str | None, from_lock: str | None,
        snapshot_path: str | None, console: Any, err: Any, confirm: Callable[[str], bool]) -> Result:
    """Plan, confirm, apply, verify, lock. install is interactive, so its human text (the plan, the question, the
    outcome) is printed on the way; the returned Result is what `render.emit` prints for --json, or an error line."""
    if snapshot_path and not dry_run:
        raise UsageProblem("--snapshot plans for another machine: it needs --dry-run")
    try:
        plan, facts, _ = plan_for(opts, snapshot_path, from_lock)
    except CannotTell as exc:  # no verdict on the machine is possible from these facts
        return _stop(str(exc), ExitCode.COULD_NOT_CHECK)
    except (NoWheel, lock.LockError) as exc:
        return _stop(str(exc), ExitCode.PROBLEMS)
    except envmod.EnvError as exc:
        return _stop(str(exc), ExitCode.COULD_NOT_CHECK)
    if dry_run:
        if not as_json:
            show(plan, console)
            console.print("Dry run: nothing was changed.")
        data = {k: v for k, v in plan.to_dict().items() if k != "schema"}
        return Result(PLAN_SCHEMA, "install", "planned", 0, {**data, "dry_run": True})
    if not as_json:
        show(plan, console)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageProblem("not asking for confirmation without a terminal: pass --yes to proceed")
        if not confirm("Proceed?"):
            console.print("Nothing was changed.")
            return Result(SCHEMA, "install", "cancelled", 0, {"plan": plan.to_dict()})
    status = err.status("installing…") if (err.is_terminal and not as_json) else None
    if status:
        status.start()
    try:
        outcome = executor.apply(plan, opts.installer,
                                 progress=(lambda m: status.update(m[:120])) if status else None)
    except executor.InstallFailed as exc:
        return _stop(f"install failed: {exc}", ExitCode.PROBLEMS)
    finally:
        if status:
            status.stop()
    verified, report, failed_devices = verify(plan, outcome.python)
    bad = [f for f in report.findings if f.severity.value == "fail"]
    gfx_problem = _gfx_mismatch(plan, verified)
    ok = not bad and not gfx_problem
    lock_data = None
    if lock_path and ok:
        lock_data = lock.write(lock_path, plan, executor.freeze(outcome.python), verified)
    result = Result(SCHEMA, "install", "installed" if ok else "problems", 0 if ok else 1,
                    {"plan": plan.to_dict(), "python": outcome.python, "log": outcome.log,
                     "installed": outcome.installed, "removed": outcome.removed, "seconds": round(outcome.seconds, 1),
                     "verification": [f.to_dict() for f in report.findings], "gfx_problem": gfx_problem,
                     "failed_devices": list(failed_devices),
                     "lock": lock_path if lock_data else None, "next": _next_command(plan, outcome.python, report)},
                    report.findings)
    if not as_json:
        _show_outcome(result, report, console)
    return result


def _show_outcome(result: Result, report: Any, console: Any) -> None:
    d = result.data
    from rocm_triton_doctor.check.render import human

    console.print(f"Installed in {d['seconds']:.0f} s: " +
                  (", ".join(f"{k} {v}" for k, v in sorted(d["installed"].items())) or "nothing new") +
                  f". Log: {d['log']}")
    human.render(report, console)
    if d["failed_devices"]:
        console.print(f"[bold red]✗ the tiny kernel failed on {', '.join(d['failed_devices'])}[/]")
    if d["gfx_problem"]:
        console.print(f"[bold red]✗ {d['gfx_problem']}[/]")
    if d["lock"]:
        console.print(f"Lock written to {d['lock']}.")
    console.print(f"Next: {d['next']}")


def verify(plan: Plan, python: str, kernel_timeout: float = devicekernel.TIMEOUT) -> tuple[Facts, Any, tuple[str, ...]]:
    """The runtime probe in the target environment (with the plan's variables set), the torch/Triton checks, the
    code-object audit of the new environment (the Collector reads its binaries), and one tiny kernel per visible
    device (install/devicekernel.py). Returns the facts, the report and the devices whose kernel failed."""
    from rocm_triton_doctor.check.probes.collect import Collector
    from rocm_triton_doctor.check import diagnose
    from rocm_triton_doctor.check.findings import verdict_for

    environ = {**os.environ, **plan.env}
    snap = Collector(python=python, runtime=True, environ=environ).collect()
    checks = [by_id()[c] for c in (*VERIFY_CHECKS, *AUDIT_CHECKS)]
    report = diagnose(snap, checks, source=f"verification of {python}")
    kernels, failed = devicekernel.run(python, environ, timeout=kernel_timeout)
    findings = (*report.findings, *kernels)
    report = replace(report, findings=findings, verdict=verdict_for(findings))
    return report.facts, report, tuple(failed)


def _gfx_mismatch(plan: Plan, facts: Facts) -> str | None:
    if plan.platform != "amd" or not plan.expected_gfx or not facts.runtime.found or not facts.runtime.value:
        return None
    from rocm_triton_doctor import knowledge

    seen = sorted({knowledge.base_gfx(d.gcn_arch) for d in facts.runtime.value.devices if d.gcn_arch})
    if seen and not set(seen) <= set(plan.expected_gfx):
        return f"torch sees {', '.join(seen)}, the plan expected {', '.join(plan.expected_gfx)}"
    return None


def _next_command(plan: Plan, python: str, report: Any = None) -> str:
    smoke = ("rocm-triton-doctor smoke" if os.path.abspath(python) == os.path.abspath(sys.executable)  # not realpath:
             else f"rocm-triton-doctor smoke --python {python}")  # a venv's python is a symlink
    triton_ok = report is None or any(f.id == "triton-import" and f.severity.value == "ok" for f in report.findings)
    if not triton_ok:  # issue #18 defect 1: smoke needs Triton, also on the CPU; never send the user in a circle
        return f"{python} -m pip install triton   (smoke needs Triton, on the CPU too), then {smoke}"
    return smoke


SCHEMA = "install/1"
PLAN_SCHEMA = "install-plan/1"


def _stop(message: str, code: ExitCode) -> Result:
    return Result.error("install", message, code, schema=SCHEMA)
