"""Does the workload that uses the GPU have the environment this shell has? (issue #15 item 4)

`check --pid PID` / `--unit NAME` (or pasted `systemctl show` / `/proc/PID/environ` text) records the workload's
GPU variables (check/facts/workload.py). The classic failure: HSA_OVERRIDE_GFX_VERSION exported in ~/.bashrc, where
`check` and `python -c` work, while the ollama systemd service never sees it and runs on the CPU or aborts
(ollama/ollama#3107, #5090; the ollama FAQ sets it with `systemctl edit ollama.service`). systemd.exec(5): a unit's
processes get Environment=/EnvironmentFile= plus the service manager's own environment, never a login shell's.
"""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus, native_rocm, torch_arch_list
from rocm_triton_doctor.check.facts import Facts, Status
from rocm_triton_doctor.check.facts.workload import WorkloadEnv, WorkloadError
from rocm_triton_doctor.check.findings import Finding, Fix
from rocm_triton_doctor.check.probes.workload import relevant

VAR = "HSA_OVERRIDE_GFX_VERSION"
# Variables whose difference changes which GPU / which code the workload uses; the rest (LD_LIBRARY_PATH, ROCM_PATH,
# PYTORCH_ROCM_ARCH, MIOPEN_USER_DB_PATH) often differ on purpose and are reported as information.
_DEVICES = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


def _shell(f: Facts, name: str) -> tuple[bool, str | None]:
    v = f.env_var(name)
    if v is not None:
        return True, v
    return (f.env_unset(name) is True), None


def override_right(f: Facts, name: str, value: str) -> bool:
    """Whether `name=value` is the same-family stand-in every GPU it applies to needs (the logic of
    checks/overrides.py `_needed`: never for a target the build carries, a natively supported target, or another
    ISA family). False whenever that cannot be told (unknown GPUs or unknown torch targets)."""
    forced, _why = knowledge.parse_override(value)
    arches, _src = torch_arch_list(f)
    if forced is None or not arches or forced not in arches:
        return False
    gpus = amd_gpus(f)
    if name != VAR:
        gpus = tuple(g for g in gpus if str(g.node) == name[len(VAR) + 1:])
    if not gpus or (name == VAR and len({g.gfx for g in gpus}) > 1):
        return False
    return all(g.gfx and g.gfx not in arches and not native_rocm(g.gfx)
               and any(r.target == forced for r in knowledge.override_rules(g.gfx)) for g in gpus)


def _fix(w: WorkloadEnv, name: str, value: str | None) -> Fix:
    setting = f'Environment="{name}={value}"' if value is not None else f"UnsetEnvironment={name}"
    if w.unit:
        unit = w.unit
        drop = f"/etc/systemd/system/{unit}.d"
        return Fix(f"Set it in the unit, not in a shell: `sudo systemctl edit {unit}` and add\n[Service]\n{setting}\n"
                   "then reload and restart (the commands below write the same drop-in).",
                   (f"sudo mkdir -p {drop}",
                    f"printf '[Service]\\n{setting}\\n' | sudo tee {drop}/rocm-triton-doctor.conf",
                    f"sudo systemctl daemon-reload && sudo systemctl restart {unit}"), needs_sudo=True)
    who = f"{w.command} (pid {w.pid})" if w.command else f"process {w.pid or '?'}"
    action = f"set {name}={value}" if value is not None else f"remove {name}"
    return Fix(f"{who} got its environment when it was started: {action} where it is started — its systemd unit "
               "(`systemctl status PID` names it), its container's `-e`/env file, or its launcher script — then "
               "restart it.", (f"systemctl status {w.pid}",) if w.pid else ())


def _system(f: Facts, key: str) -> str | None:
    """A value the pasted text's sources put under `system` (sources/host.py, sources/gpu_names.py)."""
    system = f.raw.get("system")
    value = system.get(key) if isinstance(system, dict) else None
    return str(value) if value else None


def _service_in_text(f: Facts) -> str | None:
    """The systemd unit a paste shows running the GPU program (`journalctl -u ollama`), from sources/host.py."""
    return _system(f, "service_unit")


def _show(v: str | None) -> str:
    return "unset" if v is None else (repr(v) if v == "" else v)


@check("workload-env-differs", "workload",
       "The process or systemd unit named with --pid/--unit has this shell's GPU variables (overrides, "
       "*_VISIBLE_DEVICES, HSA_*, LD_LIBRARY_PATH, ROCM_PATH).",
       "A service gets its environment from its unit or launcher, never from your shell: an override or device "
       "selection that works in the shell is missing in the server that uses the GPU.",
       "Set the variable where the workload is started (systemd drop-in, container -e), then restart it.")
def workload_env_differs(f: Facts) -> Iterable[Finding]:
    w = f.workload
    if w.status is Status.UNKNOWN:
        service = _service_in_text(f)
        shell = {n: v for n, v in (f.env.value or {}).items() if n == VAR or n.startswith(VAR + "_")} if f.env.found else {}
        if service and shell:
            # The paste shows the override exported in a shell (~/.bashrc) and the GPU program running as a systemd
            # service: systemd.exec(5) gives a unit Environment=/EnvironmentFile= and the manager's environment, never
            # a login shell's, so the service runs without it unless its unit sets it (ollama#6152, #3107).
            name, value = sorted(shell.items())[0]
            unit = service if "." in service else f"{service}.service"
            fix = _fix(WorkloadEnv(f"unit {unit}", {}), name, value)
            yield fail(f"{name}={value} is set in a shell, but {unit} is a systemd service that never reads it",
                       "A service's environment comes from its unit (Environment=, EnvironmentFile=), not from "
                       "~/.bashrc or /etc/profile; unless the unit sets it (check: `systemctl show "
                       f"{unit} -p Environment`), the server runs without the override.", evidence=("env", unit),
                       # The GPU is not shown: the user's own value, said in words (fix safety: no override
                       # command while the hardware is unknown).
                       fix=fix if amd_gpus(f) else Fix(fix.text))
            return
        yield skip("no workload named", "Run `rocm-triton-doctor check --unit ollama.service` or `--pid PID`.")
        return
    if w.status is Status.ABSENT:
        yield skip("no such workload")
        return
    if isinstance(w.value, WorkloadError):
        e = w.value
        if e.permission:
            yield skip(f"cannot read the environment of {e.source}: permission denied",
                       f"Only its owner and root may read /proc/{e.source[4:]}/environ: run "
                       f"`sudo rocm-triton-doctor check --{e.source}` or run check as that user.")
        else:
            yield skip(f"cannot read the environment of {e.source}: {e.message}")
        return
    if not isinstance(w.value, WorkloadEnv):
        yield skip(f"the workload's environment could not be read: {w.error or 'unknown'}")
        return
    wl = w.value
    if not f.env.found:
        yield skip("this shell's environment is unknown", "Paste `env | grep -E 'HSA|HIP|ROCR|VISIBLE|ROCM'` too.")
        return
    names = sorted({n for n in wl.env} | {n for n in (f.env.value or {}) if relevant(n)})
    same, unknown = [], []
    for name in names:
        (s_known, s_val), (w_known, w_val) = _shell(f, name), wl.get(name)
        if not (s_known and w_known):
            unknown.append(name)
            continue
        if s_val == w_val:
            same.append(name)
            continue
        yield from _differs(f, wl, name, s_val, w_val)
    if unknown:
        why = "; ".join(wl.unread) or "not every variable was shown"
        yield info(f"not compared ({why}): {', '.join(unknown)}")
    if len(same) + len(unknown) == len(names) and (same or not unknown):
        listed = ", ".join(same) or "none of the GPU variables is set in either"
        yield ok(f"{wl.source} has this shell's GPU variables", listed, evidence=(wl.source,))


def _differs(f: Facts, wl: WorkloadEnv, name: str, s_val: str | None, w_val: str | None) -> Iterable[Finding]:
    title = f"{name}: this shell has {_show(s_val)}, {wl.source} has {_show(w_val)}"
    ev = ("env", wl.source)
    if name == VAR or name.startswith(VAR + "_"):
        if s_val is not None and override_right(f, name, s_val):
            yield fail(title, f"This shell's value is the same-family override this GPU needs (torch carries {s_val}'s "
                       "target, not the GPU's own); the workload runs without it and fails with hipErrorNoBinaryForGpu "
                       "or falls back to the CPU.", evidence=ev, fix=_fix(wl, name, s_val))
        elif w_val is not None and override_right(f, name, w_val):
            yield info(title, "The workload has the override this GPU needs; this shell does not, so what you test "
                       "here is not what the workload runs.", evidence=ev)
        else:
            yield warn(title, "The override differs, and whether either value is right for this GPU cannot be told "
                       "here (see the hsa-override-* checks, which judge this shell's value); the workload loads code "
                       "for the gfx its own value names.", evidence=ev)
        return
    if name in _DEVICES or name.startswith("HSA_"):
        extra = (" (the service manager's own environment may still set it: `systemctl show-environment`)"
                 if w_val is None and wl.unit else "")
        yield warn(title, "The workload sees other GPUs, or runs the runtime differently, than what you test in this "
                   f"shell{extra}.", evidence=ev, fix=_fix(wl, name, s_val))
        return
    yield info(title, "Often on purpose (a service's own library path or cache); it matters when the workload loads "
               "another ROCm than this shell.", evidence=ev)


@check("workload-on-cpu", "workload",
       "A GPU program the evidence shows (ollama) keeps its model on the GPU the machine has.",
       "`ollama ps` saying 100% CPU on a machine with a usable AMD GPU means ollama gave the GPU nothing: it did not "
       "load its ROCm runner, judged the GPU's free memory too small, or was told to (num_gpu 0).",
       "The server log's lines on GPU discovery and layer offload say which; the fix depends on it.")
def workload_on_cpu(f: Facts) -> Iterable[Finding]:
    where = _system(f, "ollama_processor")  # `ollama ps`: `100% GPU`, `100% CPU`, `48%/52% CPU/GPU`
    if where is None:
        yield skip("no `ollama ps` in the evidence")
        return
    if where.replace(" ", "") != "100%CPU":
        # ollama's own word (nixpkgs#375359 showed 100% GPU while its runner used the CPU): not proof of a working
        # GPU, so no `ok`; a CPU/GPU split is ollama fitting a model larger than the free VRAM.
        yield skip(f"ollama places its model on the GPU ({where})")
        return
    gpus = amd_gpus(f)
    if not gpus:
        yield skip("ollama runs its model on the CPU; whether this machine has an AMD GPU ollama could use is unknown")
        return
    names = ", ".join(dict.fromkeys(g.name or g.gfx or "GPU" for g in gpus))
    # No command: the cause is in the server log (ollama-for-amd#87: a 9070 XT found by ollama, its 14 GB model on
    # the CPU), and each has a different remedy.
    yield warn(f"ollama runs its model 100% on the CPU although the machine has {names}",
               "ollama found no way to use the GPU for this model: its ROCm runner failed to start, the GPU's free "
               "memory looked too small, or the model asked for num_gpu 0. Paste the server log from start-up to "
               "the model load (`journalctl -u ollama --no-pager | tail -200`, or the console of `ollama serve` with "
               "OLLAMA_DEBUG=1): its 'inference compute' and 'offload' lines say which.", evidence=("ollama ps",))


CHECKS = (workload_env_differs, workload_on_cpu)
