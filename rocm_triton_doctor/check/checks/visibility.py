"""Which GPUs a process may see: ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES.

ROCm applies them in layers (ROCm docs, "GPU isolation techniques"): the ROCr runtime first keeps the devices
ROCR_VISIBLE_DEVICES lists (indices or GPU UUIDs), then HIP keeps the devices HIP_VISIBLE_DEVICES (or, on ROCm,
CUDA_VISIBLE_DEVICES) lists, counting among the ones ROCr left. Both set is the classic trap: `ROCR=1 HIP=1` leaves
no device at all (mcmonkeyprojects/SwarmUI#565), `ROCR=0 HIP=0,1` asks for a GPU that is not there (pytorch#140398).
"""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.facts import Facts, Status
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.findings import Finding, Fix

VARS = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
DOCS = "https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html"


def list_entries(value: str) -> list[str]:
    """A visibility variable's list (`0,1` -> ['0', '1']), empty entries dropped."""
    return [v.strip() for v in value.split(",") if v.strip()]


def _indices(entries: list[str]) -> list[int] | None:
    return [int(e) for e in entries] if all(e.lstrip("-").isdigit() for e in entries) else None


@check("visible-devices", "visibility", "ROCR_/HIP_/CUDA_VISIBLE_DEVICES leave at least one GPU, and select GPUs that exist.",
       "An empty or out-of-range list hides every GPU: torch reports no devices, llama.cpp 'no ROCm-capable device'; "
       "with both ROCR_ and HIP_VISIBLE_DEVICES set, HIP's indices count only the GPUs ROCr left.",
       "Select GPUs with one variable (ROCR_VISIBLE_DEVICES), with indices from `rocminfo`.", needs=("env",),
       ok_is_evidence=False)
def visible_devices(f: Facts) -> Iterable[Finding]:
    ray = with_signature(f.errors, "ray-visible-devices-mismatch")
    if ray:
        # Ray 2.45+ on ROCm refuses a CUDA_VISIBLE_DEVICES that HIP_VISIBLE_DEVICES does not equal (ray#52701).
        cuda = f.env_var("CUDA_VISIBLE_DEVICES")
        yield fail("Ray refuses the GPU selection: CUDA_VISIBLE_DEVICES without an equal HIP_VISIBLE_DEVICES",
                   "Ray's AMD accelerator manager reads HIP_VISIBLE_DEVICES and asserts the two agree.",
                   evidence=quote(ray),
                   fix=Fix("Select the GPUs with HIP_VISIBLE_DEVICES instead, and unset CUDA_VISIBLE_DEVICES (or set "
                           "both to the same list).",
                           ("unset CUDA_VISIBLE_DEVICES", f"export HIP_VISIBLE_DEVICES={cuda}") if cuda else ()))
        return
    values = {v: f.env_var(v) for v in VARS if f.env_var(v) is not None}
    if not values:
        if f.env_complete:
            yield ok("no *_VISIBLE_DEVICES variable set: every GPU is visible")
        else:
            yield skip("*_VISIBLE_DEVICES unknown", "Paste `env | grep VISIBLE`.")
        return
    shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
    for name, value in values.items():
        entries = list_entries(value or "")
        idx = _indices(entries)
        if not entries or (idx is not None and any(i < 0 for i in idx)):
            yield fail(f"{name}={value!r} hides every GPU", f"{shown}. An empty list or -1 selects no device.",
                       evidence=("env",), fix=Fix("Unset it, or list the GPUs to use (indices from `rocminfo`).",
                                                  (f"unset {name}",)), links=(DOCS,))
            return
    yield from _ignored(f, values, shown)
    hip_list, cuda_list = values.get("HIP_VISIBLE_DEVICES"), values.get("CUDA_VISIBLE_DEVICES")
    if hip_list is not None and cuda_list is not None and list_entries(hip_list) != list_entries(cuda_list) \
            and not f.nvidia_gpus_present:
        # HIP reads HIP_VISIBLE_DEVICES first and CUDA_VISIBLE_DEVICES only without it (ROCclr's device selection);
        # tools written for CUDA (ollama's discovery, Ray, scripts) read the other, so two lists disagree about which
        # GPU a program gets (Jeffser/Alpaca#1091: HIP 1, CUDA 0 on a one-GPU machine: the GPU went unused).
        yield warn(f"HIP_VISIBLE_DEVICES={hip_list!r} and CUDA_VISIBLE_DEVICES={cuda_list!r} select different GPUs",
                   f"{shown}. HIP programs use HIP_VISIBLE_DEVICES ({hip_list}); tools that read "
                   "CUDA_VISIBLE_DEVICES count from another list, and an index past the last GPU selects none.",
                   evidence=("env",),
                   fix=Fix("Keep one list: set HIP_VISIBLE_DEVICES to the GPUs to use (indices from `rocminfo`; "
                           "unset it too on a one-GPU machine) and unset CUDA_VISIBLE_DEVICES.",
                           ("unset CUDA_VISIBLE_DEVICES",)), links=(DOCS,))
        return
    rocr = list_entries(values.get("ROCR_VISIBLE_DEVICES") or "")
    hip_name = "HIP_VISIBLE_DEVICES" if "HIP_VISIBLE_DEVICES" in values else "CUDA_VISIBLE_DEVICES"
    hip = _indices(list_entries(values.get(hip_name) or "")) if hip_name in values else None
    if rocr and hip is not None:
        too_big = [i for i in hip if i >= len(rocr)]
        if too_big:
            yield fail(f"{hip_name} asks for GPU {', '.join(map(str, too_big))}, but ROCR_VISIBLE_DEVICES leaves only "
                       f"{len(rocr)}", f"{shown}. HIP counts its indices among the GPUs ROCr left visible "
                       f"(numbered 0…{len(rocr) - 1}), not among all GPUs, so these select nothing.",
                       evidence=("env",),
                       fix=Fix(f"Select GPUs with ROCR_VISIBLE_DEVICES alone (it keeps {','.join(rocr)}) and unset "
                               f"{hip_name}.", (f"unset {hip_name}", f"export ROCR_VISIBLE_DEVICES={','.join(rocr)}")),
                       links=(DOCS,))
            return
        yield warn(f"both ROCR_VISIBLE_DEVICES and {hip_name} are set", f"{shown}. {hip_name}'s indices count among "
                   "the GPUs ROCr left; that works here but is easy to break.", evidence=("env",),
                   fix=Fix("Use ROCR_VISIBLE_DEVICES alone.", (f"unset {hip_name}",)), links=(DOCS,))
        return
    gpus = amd_gpus(f)
    rocr_idx = _indices(rocr) if rocr else None
    if rocr_idx and gpus and f.gpus.status is Status.FOUND and f.gpus.source.startswith("/sys/class/kfd"):
        missing = [i for i in rocr_idx if i >= len(gpus)]
        if missing:
            yield fail(f"ROCR_VISIBLE_DEVICES names GPU {', '.join(map(str, missing))}, but KFD has {len(gpus)} GPU(s)",
                       shown, evidence=("env", f.gpus.source),
                       fix=Fix(f"Use indices 0…{len(gpus) - 1} (rocminfo order).", ("unset ROCR_VISIBLE_DEVICES",)))
            return
    none = with_signature(f.errors, "no-rocm-capable-device", "no-hip-gpus")
    if none:
        # The runtime found no device while a variable selects some: its first suspect. HIP numbers the GPUs the
        # process can see from 0, and a job's cgroup or a container shows only its own, so a node-wide index selects
        # nothing (flux-core#7807: a one-GPU job's cgroup, CUDA_VISIBLE_DEVICES=7, hipGetDeviceCount -> 100).
        yield fail(f"{shown} is set and the runtime found no GPU",
                   "HIP counts these indices among the GPUs this process can see, numbered from 0; inside a job "
                   "allocation, a cgroup or a container that is fewer than the node has, so an index meant for the "
                   "node selects nothing.", evidence=("env", *quote(none)),
                   fix=Fix(f"Use indices among the GPUs the process sees (`rocminfo` run in the same job or container "
                           f"lists them, from 0), or unset {', '.join(values)} and let the allocation choose."),
                   links=(DOCS,))
        return
    yield info(f"GPU selection: {shown}", "Indices follow rocminfo's GPU order.")


def _ignored(f: Facts, values: dict[str, str | None], shown: str) -> Iterable[Finding]:
    """torch enumerating more GPUs than the variables let through: they did not take effect in that process. The HIP
    runtime reads them once, when it starts, so a value set later (os.environ after `import torch` touched the GPU, a
    framework that sets it per worker after start-up) changes nothing, and torch releases before the fix in
    pytorch#140398 ignored ROCR_VISIBLE_DEVICES in device_count (ray#46563: ROCR_VISIBLE_DEVICES 0,1, 4 GPUs)."""
    rt = f.runtime.value if f.runtime.found else None
    seen = None if rt is None else rt.device_count if rt.device_count is not None else len(rt.devices) or None
    hip_name = "HIP_VISIBLE_DEVICES" if "HIP_VISIBLE_DEVICES" in values else "CUDA_VISIBLE_DEVICES"
    lists = [list_entries(values.get(n) or "") for n in ("ROCR_VISIBLE_DEVICES", hip_name) if n in values]
    allowed = min((len(x) for x in lists if x), default=None)
    if seen is None or allowed is None or seen <= allowed or f.nvidia_gpus_present:
        return
    yield warn(f"torch sees {seen} GPUs although {shown} lets {allowed} through",
               "The variables did not take effect in that process: the HIP runtime reads them once, when it starts, so a "
               "value set after torch first touched the GPU changes nothing; torch releases before pytorch#140398 also "
               "counted devices without ROCR_VISIBLE_DEVICES.", evidence=("env", "torch device count"),
               fix=Fix("Set the variable in the environment the process starts with (the shell, the service unit, the "
                       "job or container definition, or os.environ before `import torch`), not after; with Ray, let it "
                       "set the GPU ids per worker and do not change them in the worker; then check "
                       "torch.cuda.device_count() again."), links=(DOCS, "https://github.com/pytorch/pytorch/pull/140398"))


CHECKS = (visible_devices,)
