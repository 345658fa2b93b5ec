"""The installed torch: present, the right build for this hardware, seeing the GPU, one consistent family."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import (
    amd_host,
    check,
    fail,
    info,
    ok,
    skip,
    torch_build,
    torch_index_url,
    torch_version,
    warn,
)
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.findings import Finding, Fix

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def install_command(f: Facts) -> str:
    """The pip command that installs the right torch for this machine, from the knowledge base.

    AMD: the newest torch whose ROCm index carries every GPU's gfx and supports this Python; NVIDIA: PyPI's default
    Linux build (CUDA); CPU-only: the CPU index."""
    plat = platform(f)
    py = f.python.value.version if f.python.found and f.python.value else None
    if plat == "amd":
        gfx = {g.gfx for g in amd_gpus(f) if g.gfx}
        for rel in sorted(knowledge.torch_releases(), key=lambda r: Version(r.torch), reverse=True):
            if py and not rel.supports_python(py):
                continue
            for index in reversed(rel.rocm_indexes):
                if gfx <= set(knowledge.index_arches(index) or ()):
                    return (f"pip install --force-reinstall torch=={rel.torch} torchvision torchaudio "
                            f"--index-url {knowledge.index_url(index)}")
        return "pip install --force-reinstall torch torchvision torchaudio --index-url " + knowledge.index_url("rocm7.2")
    if plat == "nvidia":
        return "pip install --force-reinstall torch torchvision torchaudio"
    return f"pip install --force-reinstall torch torchvision torchaudio --index-url {CPU_INDEX}"


def platform(f: Facts) -> str:
    """amd | nvidia | cpu | unknown — what kind of accelerator this machine has."""
    if amd_host(f):
        return "amd"
    if f.nvidia_gpus_present:
        return "nvidia"
    if amd_host(f) is False or f.nvidia.known:
        return "cpu"
    return "unknown"


@check("python-version-wheels", "python", "PyTorch publishes ROCm wheels for this Python version.",
       "pip falls back to an old or CPU-only torch, or finds none ('from versions: none'), when the Python is too "
       "new or too old for the ROCm index.",
       "Create a virtual environment with a supported Python (uv venv --python 3.12, or pyenv).")
def python_version(f: Facts) -> Iterable[Finding]:
    if not f.python.found or not f.python.value:
        yield skip("Python environment unknown", f.python.describe())
        return
    py = f.python.value.version
    plat = platform(f)
    rels = [r for r in knowledge.torch_releases() if r.rocm_indexes]
    ok_rels = [r for r in rels if r.supports_python(py)]
    newest = max(rels, key=lambda r: Version(r.torch))
    if plat != "amd":
        yield ok(f"Python {py}")
        return
    if not ok_rels:
        lo = min(rels, key=lambda r: Version(r.torch))
        yield fail(f"no ROCm torch wheel for Python {py}",
                   f"ROCm wheels known to the doctor need Python {newest.requires_python} (torch {newest.torch}) … "
                   f"{lo.requires_python} (torch {lo.torch}).",
                   evidence=("python",),
                   fix=Fix("Use a virtual environment with a supported Python.",
                           ("python3.12 -m venv ~/rocm-env && . ~/rocm-env/bin/activate", install_command(f))))
        return
    best = max(ok_rels, key=lambda r: Version(r.torch))
    if best.torch != newest.torch:
        yield warn(f"Python {py} limits you to torch {best.torch} on ROCm",
                   f"The newest ROCm wheels (torch {newest.torch}) need Python {newest.requires_python}.",
                   fix=Fix("Use Python 3.12 in a virtual environment for the newest wheels."))
        return
    yield ok(f"Python {py} has ROCm wheels up to torch {best.torch}")


@check("torch-missing", "torch", "torch is installed in the target Python environment.",
       "Nothing GPU-related can run without it; `smoke` needs it.",
       "Install the build for this machine from the index the finding names.")
def torch_missing(f: Facts) -> Iterable[Finding]:
    b = torch_build(f)
    if b == "unknown" and not f.python.found:
        yield skip("Python environment unknown")
        return
    if b != "missing":
        yield ok(f"torch {torch_version(f) or '?'} installed")
        return
    plat = platform(f)
    exe = f.python.value.executable if f.python.found and f.python.value else "this Python"
    sev = fail if plat in ("amd", "nvidia") else warn
    yield sev(f"torch is not installed in {exe}",
              "The doctor never installs torch as its own dependency: a plain `pip install torch` would pull the "
              "CUDA build.", fix=Fix("Install the build that matches this machine into a fresh virtual environment, "
                                     "or with this interpreter's own pip:",
                                     ("rocm-triton-doctor install --venv ~/rtd-venv",
                                      f"{exe} -m {install_command(f)}" if exe != "this Python" else install_command(f))))


@check("torch-build-mismatch", "torch", "The torch build (ROCm / CUDA / CPU) matches this machine's GPU.",
       "`pip install torch` gives the CUDA build on Linux; on an AMD machine it reports no GPU "
       "(torch.version.hip is None) and Triton finds 0 active drivers.",
       "Reinstall torch from the ROCm index that carries this GPU's gfx target.")
def torch_build_mismatch(f: Facts) -> Iterable[Finding]:
    b, plat, v = torch_build(f), platform(f), torch_version(f)
    if b in ("missing", "unknown"):
        yield skip("torch build unknown" if b == "unknown" else "torch not installed")
        return
    if plat == "unknown":
        yield skip(f"torch {v} is a {b} build; this machine's GPU is unknown")
        return
    want = {"amd": "rocm", "nvidia": "cuda", "cpu": "cpu"}[plat]
    if b == want or (plat == "cpu" and b in ("cuda", "rocm")):
        if plat == "cpu" and b != "cpu":
            yield info(f"torch {v} is a {b.upper()} build on a machine without that GPU",
                       "It runs on the CPU, but the CPU build is much smaller.")
        else:
            yield ok(f"torch {v} is a {b.upper() if b != 'rocm' else 'ROCm'} build, matching this {plat.upper()} machine")
        return
    labels = {"rocm": "ROCm", "cuda": "CUDA", "cpu": "CPU-only"}
    fix = Fix("Replace it with the matching build (torch, torchvision and torchaudio together, from one index).",
              (install_command(f),))
    if plat == "amd":
        detail = {"cuda": "This is what `pip install torch` gives on Linux. It cannot use AMD GPUs.",
                  "cpu": "pip may have fallen back to it because no ROCm wheel matched (Python version?)."}.get(b, "")
        yield fail(f"torch {v} is a {labels[b]} build on an AMD GPU machine", detail, evidence=("torch version",),
                   fix=fix, links=("https://pytorch.org/get-started/locally/",))
    elif plat == "nvidia":
        yield (fail if b == "rocm" else warn)(f"torch {v} is a {labels[b]} build on an NVIDIA GPU machine",
                                              "It cannot use the NVIDIA GPU.", fix=fix)


@check("torch-sees-gpu", "torch", "torch.cuda.is_available() is True and torch sees every GPU (runtime probe).",
       "This is the end-to-end proof that driver, permissions, runtime and wheel fit together.",
       "Follow the other failing findings; the runtime error is quoted verbatim.")
def torch_sees_gpu(f: Facts) -> Iterable[Finding]:
    rt = f.runtime
    if rt.status.value == "unknown":
        yield skip("runtime probe not run (--no-runtime or a snapshot without it)")
        return
    if rt.value is None:
        yield fail("the runtime probe failed", rt.error, evidence=("runtime probe",))
        return
    r = rt.value
    if r.torch_import_failed:  # raised, crashed or hung at import: reported by 'torch-import'
        yield skip("torch is not importable (see 'torch-import')", r.error or "")
        return
    if r.timed_out:
        yield fail("importing torch did not finish (runtime probe timed out)",
                   "A hang at import usually means a wedged driver or an incompatible HIP runtime.",
                   fix=Fix("Retry with a debug log.", ("AMD_LOG_LEVEL=4 python -c 'import torch; torch.cuda.init()'",)))
        return
    if r.torch_version is None:
        yield fail("torch could not be inspected", r.error or "", evidence=("runtime probe",))
        return
    plat = platform(f)
    if plat == "cpu":
        raw = f.raw.get("runtime")
        if isinstance(raw, dict) and raw.get("torch_imported") is False:  # an older probe's static read
            yield skip(f"torch {r.torch_version} is a CPU build (not imported by this snapshot's probe)")
        else:
            yield ok(f"torch {r.torch_version} runs on the CPU (no GPU here)")
        return
    if r.is_available:
        names = "; ".join(f"{d.index}: {d.name}" + (f" ({d.gcn_arch})" if d.gcn_arch and r.hip_version else "") for d in r.devices)
        expected = len(amd_gpus(f)) if plat == "amd" else (len(f.nvidia.value.gpus) if f.nvidia.value else 0)
        hidden = any(f.env_var(v) for v in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"))
        if expected and len(r.devices) < expected and not hidden:
            yield warn(f"torch sees {len(r.devices)} of {expected} GPUs", names,
                       fix=Fix("A GPU whose render node cannot be opened is skipped silently; see 'render-access'."))
        else:
            yield ok(f"torch sees {len(r.devices)} GPU(s): {names}")
        return
    why = r.error or "torch.cuda.is_available() returned False"
    if torch_build(f) not in ("rocm", "cuda"):
        yield skip(f"torch {r.torch_version} is not a GPU build (see 'torch-build-mismatch')")
        return
    yield fail(f"torch {r.torch_version} does not see any GPU", why, evidence=("runtime probe",),
               fix=Fix("Fix the failing driver/access/override findings above; to see the runtime's reason, run:",
                       ("AMD_LOG_LEVEL=3 HSAKMT_DEBUG_LEVEL=7 python -c 'import torch; print(torch.cuda.is_available())'",)))


@check("torch-family-mismatch", "torch", "torchvision/torchaudio come from the same build and release as torch.",
       "A PyPI torchvision next to a ROCm torch pulls a CUDA torch back in, or fails with "
       "'operator torchvision::nms does not exist'.",
       "Install torch, torchvision and torchaudio together from one index.")
def torch_family(f: Facts) -> Iterable[Finding]:
    if not f.python.found or not f.python.value:
        yield skip("Python environment unknown")
        return
    env = f.python.value
    torch = env.dist("torch")
    if torch is None:
        yield skip("torch not installed")
        return
    bad = []
    for name in ("torchvision", "torchaudio"):
        d = env.dist(name)
        if d is None:
            continue
        pin = d.pinned({"torch"})
        if build_tag(d.local) != build_tag(torch.local):
            bad.append(f"{name} {d.version} (build '{d.local or 'PyPI default'}') vs torch {torch.version}")
        elif pin and pin[1] and Version(torch.version.split("+")[0]) not in _spec(pin[1]):
            bad.append(f"{name} {d.version} requires torch{pin[1]}, installed {torch.version}")
    if not bad:
        yield ok("torch family consistent")
        return
    url = torch_index_url(torch.version)
    index = f" --index-url {url}" if url else ""
    yield fail("torch family packages from different builds", "; ".join(bad), evidence=("python",),
               fix=Fix("Reinstall them together from torch's index.",
                       (f"pip install --force-reinstall torch=={torch.version} torchvision torchaudio{index}",)))


def build_tag(local: str) -> str:
    """'rocm6.4.1.git1ded221d' -> 'rocm6.4.1'; '' (PyPI default build) stays ''."""
    m = re.match(r"^(rocm\d+(?:\.\d+)*|cu\d+|cpu|xpu)", local)
    return m.group(1) if m else local


def _spec(text: str):  # type: ignore[no-untyped-def]
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


@check("nvml-with-rocm-torch", "torch", "No NVIDIA management library (pynvml / nvidia-ml-py) next to a ROCm torch.",
       "Libraries that detect the GPU vendor by importing NVML can take an AMD machine for an NVIDIA one, and "
       "pynvml calls fail with 'NVML Shared Library Not Found'.",
       "Uninstall it if nothing on this AMD machine needs it.")
def nvml(f: Facts) -> Iterable[Finding]:
    if not f.python.found or not f.python.value:
        yield skip("Python environment unknown")
        return
    present = [n for n in ("pynvml", "nvidia-ml-py") if f.python.value.dist(n)]
    if not present or torch_build(f) != "rocm":
        yield ok("no NVML bindings next to a ROCm torch")
        return
    yield warn(f"{' and '.join(present)} installed next to a ROCm torch",
               "Packages that probe NVML to pick a platform may choose the CUDA path on this AMD machine.",
               fix=Fix("Remove it unless a tool you use requires it.", (f"pip uninstall -y {' '.join(present)}",)))


CHECKS = (python_version, torch_missing, torch_build_mismatch, torch_sees_gpu, torch_family, nvml)
