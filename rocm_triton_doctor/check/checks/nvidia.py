"""The NVIDIA side: on NVIDIA machines the doctor checks the CUDA torch and Triton instead of ROCm."""

from __future__ import annotations

from collections.abc import Iterable

import re

from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.findings import Finding, Fix

# The oldest Linux driver each CUDA release runs on (NVIDIA's CUDA Toolkit release notes, "CUDA Toolkit and
# Corresponding Driver Versions", table 3; 11.1+ and 12.x: the minor-version-compatibility minimums, table 2).
MIN_DRIVER = {(9, 2): (396, 26), (10, 0): (410, 48), (10, 1): (418, 39), (10, 2): (440, 33), (11, 0): (450, 36),
              (11, 1): (450, 80), (12, 0): (525, 60)}


# The first CUDA release that compiles for a compute capability, and PyTorch's first index built with it (NVIDIA CUDA
# toolkit release notes: Ada/Hopper in 11.8, Blackwell sm_100/sm_120 in 12.8; pytorch.org: cu118, cu128 wheels).
FIRST_CUDA = {"sm_89": ("11.8", "cu118"), "sm_90": ("11.8", "cu118"), "sm_100": ("12.8", "cu128"),
              "sm_120": ("12.8", "cu128")}

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


def _min_driver(cuda: str) -> tuple[int, int] | None:
    m = re.match(r"^(\d+)\.(\d+)", cuda)
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    keys = [k for k in MIN_DRIVER if k <= (major, minor) and (k[0] == major or major < 11)]
    return MIN_DRIVER[max(keys)] if keys else None


@check("cuda-driver-vs-torch", "nvidia", "The NVIDIA driver runs the CUDA version torch was built with, and torch carries "
       "code for the GPU.", "A driver older than torch's CUDA ('The NVIDIA driver on your system is too old') or a "
       "torch without the GPU's compute capability ('sm_90 is not compatible') leaves torch.cuda unusable.",
       "Update the driver, or install a torch built for a CUDA the driver and GPU support.")
def cuda_driver_vs_torch(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "nvidia-driver-too-old", "cuda-capability-not-compiled")
    rt = f.runtime.value if f.runtime.found else None
    system = f.raw.get("system") if isinstance(f.raw.get("system"), dict) else None
    driver = str(system.get("nvidia_driver") or "") if system else ""
    cuda = rt.cuda_version if rt is not None else None
    for e in errs:
        if "cuda-capability-not-compiled" in e.signatures:
            m = re.search(r"capability (sm_\d+)", e.text)
            sm = m.group(1) if m else None
            first = FIRST_CUDA.get(sm or "")
            where = (f"CUDA {first[0]} or newer, which is the first to carry {sm}: "
                     f"https://download.pytorch.org/whl/{first[1]} or a later cuXYZ index" if first else
                     "a CUDA that has this capability, from download.pytorch.org/whl/cuXYZ (see pytorch.org's selector)")
            yield fail(f"this torch has no code for the GPU's {sm or 'compute capability'}",
                       "The warning lists the capabilities the build carries; kernels cannot run on this GPU.",
                       evidence=(e.text[:200],),
                       fix=Fix(f"Install a torch built with {where}."))
            return
    need = _min_driver(cuda) if cuda else None
    have = tuple(int(x) for x in re.findall(r"\d+", driver)[:2]) if driver else None
    # From the version table alone only when torch.cuda is known to be unavailable: NVIDIA's forward-compatibility
    # package runs newer CUDA on older drivers in data-centre images (held-out vllm#7943: CUDA 12.1 on 470, working).
    too_old = bool(errs) or (need is not None and have is not None and len(have) == 2 and have < need
                             and rt is not None and rt.is_available is False)
    if too_old:
        yield fail(f"the NVIDIA driver{' ' + driver if driver else ''} is too old for torch's CUDA {cuda or ''}".rstrip(),
                   (f"CUDA {cuda} needs driver {need[0]}.{need[1]:02d} or newer. " if need else "")
                   + "torch.cuda cannot start on an older driver.", evidence=tuple(e.text[:200] for e in errs),
                   fix=Fix("Update the NVIDIA driver, or install a torch built for a CUDA this driver supports from "
                           "download.pytorch.org/whl/cuXYZ."))
        return
    if need is not None and have is not None and (have >= need or (rt is not None and rt.is_available)):
        yield ok(f"NVIDIA driver {driver} runs torch's CUDA {cuda}")
        return
    yield skip("the driver or torch's CUDA version is unknown" if cuda or driver else "no CUDA torch and driver to compare")


@check("triton-ptxas-arch", "nvidia", "The ptxas Triton runs knows this NVIDIA GPU's architecture.",
       "Triton compiles through the ptxas bundled in its wheel; one older than the GPU ('Value 'sm_121a' is not "
       "defined for option 'gpu-name'') compiles no kernel (triton-lang/triton#8539, a DGX Spark).",
       "Point TRITON_PTXAS_PATH at a CUDA toolkit's ptxas that knows the architecture.")
def triton_ptxas_arch(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "ptxas-unknown-arch")
    if not errs:
        yield skip("no ptxas 'not defined for option gpu-name' error in the evidence")
        return
    m = next((re.search(r"Value '(sm_\d+a?)'", e.text) for e in errs), None)
    sm = m.group(1) if m else "this GPU's architecture"
    bundled = any("backends/nvidia/bin/ptxas" in e.text for e in errs)
    yield fail(f"Triton's ptxas does not know {sm}",
               ("The ptxas bundled in the triton wheel (backends/nvidia/bin/ptxas) is older than this GPU. "
                if bundled else "The ptxas Triton ran is older than this GPU. ")
               + "No Triton kernel (torch.compile included) can compile until a newer ptxas is used.",
               evidence=quote(errs),
               fix=Fix(f"Use a CUDA toolkit's ptxas that lists {sm} in `ptxas --help`: export "
                       "TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas (or that toolkit's path), or install a triton "
                       "release whose bundled ptxas knows the GPU."))


CHECKS = (nvidia_driver, cuda_driver_vs_torch, triton_ptxas_arch)
