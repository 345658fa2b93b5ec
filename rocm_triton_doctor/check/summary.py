"""Key facts as a small plain dict: the `facts` block of JSON output, report headers and fleet comparisons."""

from __future__ import annotations

from typing import Any

from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.python import torch_build, torch_version


def facts_summary(f: Facts) -> dict[str, Any]:
    gpus = []
    for g in f.gpus.value or () if f.gpus.found else ():
        gpus.append({"node": g.node, "gfx": g.gfx, "effective_gfx": g.effective_gfx, "name": g.name,
                     "vram_bytes": g.vram_bytes, "compute_units": g.compute_units, "wave_size": g.wave_size,
                     "integrated": g.integrated, "device_id": f"0x{g.device_id:04x}" if g.device_id else None})
    nv = f.nvidia.value if f.nvidia.found else None
    py = f.python.value if f.python.found else None
    rt = f.runtime.value if f.runtime.found else None
    triton = {}
    if py:
        triton = {n: d.version for n, d in py.distributions.items() if "triton" in n and n != "rocm-triton-doctor"}
    raw_system = f.raw.get("system")
    system: dict[str, Any] = raw_system if isinstance(raw_system, dict) else {}
    return {
        "host": system.get("hostname"),
        "os": f.os.value.pretty_name if f.os.found and f.os.value else None,
        "kernel": f.kernel_release.value,
        "wsl": f.wsl.value,
        "container": f.container.value,
        "amdgpu": ({"state": f.amdgpu_initstate.value,
                    "version": (f.amdgpu_version.value or "").strip() or None} if f.amdgpu_initstate.found else None),
        "rocm": f.rocm.value.version if f.rocm.found and f.rocm.value else None,
        "amd_gpus": gpus,
        "nvidia": ({"driver": nv.driver_version, "gpus": [g.name for g in nv.gpus]} if nv else None),
        "python": py.version if py else None,
        "python_executable": py.executable if py else None,
        "torch": torch_version(f),
        "torch_build": torch_build(f),
        "hip_version": rt.hip_version if rt else None,
        "cuda_version": rt.cuda_version if rt else None,
        "torch_arch_list": list(rt.arch_list) if rt and rt.arch_list else None,
        "triton": triton,
        "triton_backend": rt.triton_backend if rt else None,
        "triton_arch": rt.triton_arch if rt else None,
        "statuses": {name: getattr(f, name).status.value for name in
                     ("os", "gpus", "dev_kfd", "rocm", "python", "runtime", "nvidia")},
    }
