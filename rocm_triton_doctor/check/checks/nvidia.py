"""The NVIDIA side: on NVIDIA machines the doctor checks the CUDA torch and Triton instead of ROCm."""

from __future__ import annotations

from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, info, skip, warn
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.findings import Finding


@check("nvidia-driver", "nvidia", "NVIDIA GPUs and driver, for machines on the CUDA path.",
       "On NVIDIA machines the doctor checks the CUDA torch and Triton instead of ROCm.",
       "Install the NVIDIA driver and a CUDA build of torch.")
def nvidia_driver(f: Facts) -> Iterable[Finding]:
    if not f.nvidia.found or not f.nvidia.value:
        yield skip("no NVIDIA GPU")
        return
    nv = f.nvidia.value
    gpus = "; ".join(f"{g.name} ({g.memory}, sm {g.compute_cap})" for g in nv.gpus) or "no GPU listed by nvidia-smi"
    if not nv.gpus:
        yield warn(f"NVIDIA driver {nv.driver_version} loaded but nvidia-smi lists no GPU", gpus)
        return
    yield info(f"NVIDIA driver {nv.driver_version or '?'}: {len(nv.gpus)} GPU(s)", gpus)


CHECKS = (nvidia_driver,)
