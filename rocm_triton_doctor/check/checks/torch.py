"""The installed torch: present, the right build for this hardware, seeing the GPU, one consistent family."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, needed, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.facts.platform import accelerator, os_family
from rocm_triton_doctor.check.facts.python import build_tag, torch_build, torch_index_url, torch_version
from rocm_triton_doctor.check.findings import Finding, Fix

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def pip(f: Facts) -> str:
    """The pip of the environment being checked: `<its python> -m pip` when the snapshot names the interpreter (a bare
    `pip` runs whatever pip is first on PATH, often another environment's; issue #10 item 8)."""
    exe = f.python.value.executable if f.python.found and f.python.value else ""
    return f"{shlex.quote(exe)} -m pip" if exe else "pip"


def install_command(f: Facts) -> str | None:
    """The pip command that installs the right torch for this machine, from the knowledge base; None when the
    hardware is not known (fix safety: never an index derived from an unknown, issue #10).

    AMD: the newest torch whose ROCm index carries every GPU's gfx and supports this Python; NVIDIA: PyPI's default
    Linux build (CUDA); CPU-only (probed: no AMD GPU, no NVIDIA GPU): the CPU index."""
    plat = accelerator(f)
    py = f.python.value.version if f.python.found and f.python.value and f.python.value.version else None
    if py is None and plat in ("amd", "cpu"):
        return None  # which wheel depends on the Python: ask for `python --version` (issue #10 item 9)
    if plat == "amd":
        gfx = {g.gfx for g in amd_gpus(f) if g.gfx}
        if not gfx:
            return None  # the index depends on the GPU's gfx (older targets are dropped): ask for it
        for rel in sorted(knowledge.torch_releases(), key=lambda r: Version(r.torch), reverse=True):
            if py and not rel.supports_python(py):
                continue
            for index in reversed(rel.rocm_indexes):
                if gfx <= set(knowledge.index_arches(index, rel.version_on(index)) or ()):
                    return (f"{pip(f)} install --force-reinstall torch=={rel.version_on(index)} torchvision torchaudio "
                            f"--index-url {knowledge.index_url(index)}")
        return None  # no published ROCm wheel for this GPU/Python: say so in words, not with a wrong index
    if plat == "nvidia":
        # PyPI's torch is the CUDA build on Linux only; on Windows it is the CPU build (the CUDA builds are on
        # download.pytorch.org/whl/cuXYZ, and which cuXYZ fits depends on the driver: Eddycrack864/UVR5-UI#31). So the
        # command only where the evidence shows Linux; otherwise words.
        return f"{pip(f)} install --force-reinstall torch torchvision torchaudio" if os_family(f) == "linux" else None
    if plat == "cpu":
        return f"{pip(f)} install --force-reinstall torch torchvision torchaudio --index-url {CPU_INDEX}"
    return None


def no_command_why(f: Facts) -> str:
    """Why install_command gave no command, and what would let it."""
    gfx = sorted({g.gfx for g in amd_gpus(f) if g.gfx})
    if not (f.python.found and f.python.value and f.python.value.version):
        return "Which wheel fits depends on the Python version: paste `python --version`."
    if accelerator(f) == "amd" and gfx:
        return (f"No ROCm wheel (download.pytorch.org/whl/rocmX.Y) carries {', '.join(gfx)} for this Python (as of "
                f"{knowledge.as_of()}); such GPUs need a source build or an older/community build.")
    if accelerator(f) == "nvidia":
        return ("PyPI's torch is the CUDA build on Linux but the CPU build on Windows: on Windows install from "
                "https://download.pytorch.org/whl/cuXYZ for this driver; on Linux `pip install torch` (paste "
                "`uname -a` to get the command).")
    return "Which build that is depends on the GPU: paste `rocminfo | grep gfx` or `nvidia-smi -L`."


def commands(*cmds: str | None) -> tuple[str, ...]:
    return tuple(c for c in cmds if c)


@check("torch-missing", "torch", "torch is installed in the target Python environment.",
       "Nothing GPU-related can run without it; `smoke` needs it.",
       "Install the build for this machine from the index the finding names.", ok_is_evidence=False)
def torch_missing(f: Facts) -> Iterable[Finding]:
    b = torch_build(f)
    if b == "unknown" and not torch_version(f):
        yield skip("whether torch is installed is unknown",
                   "Paste `python -m pip list` (unfiltered) or `python -c 'import torch; print(torch.__version__)'`.")
        return
    if b != "missing":
        yield ok(f"torch {torch_version(f) or '?'} installed")
        return
    plat = accelerator(f)
    exe = f.python.value.executable if f.python.found and f.python.value else "this Python"
    sev = fail if plat in ("amd", "nvidia") else warn
    yield sev(f"torch is not installed in {exe}",
              "The doctor never installs torch as its own dependency: a plain `pip install torch` would pull the "
              "CUDA build.", fix=Fix("Install the build that matches this machine (a virtual environment is "
                                     "recommended: `rocm-triton-doctor install --venv DIR` plans and verifies it)."
                                     + ("" if install_command(f) else " " + no_command_why(f)),
                                     commands(install_command(f))))


@check("torch-build-mismatch", "torch", "The torch build (ROCm / CUDA / CPU) matches this machine's GPU.",
       "`pip install torch` gives the CUDA build on Linux; on an AMD machine it reports no GPU "
       "(torch.version.hip is None) and Triton finds 0 active drivers.",
       "Reinstall torch from the ROCm index that carries this GPU's gfx target.")
def torch_build_mismatch(f: Facts) -> Iterable[Finding]:
    b, plat, v = torch_build(f), accelerator(f), torch_version(f)
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
    cmd = install_command(f)
    fix = Fix("Replace it with the matching build (torch, torchvision and torchaudio together, from one index)."
              + ("" if cmd else " " + no_command_why(f)), commands(cmd))
    if plat == "amd":
        detail = {"cuda": "This is what `pip install torch` gives on Linux. It cannot use AMD GPUs.",
                  "cpu": "pip may have fallen back to it because no ROCm wheel matched (Python version?)."}.get(b, "")
        yield fail(f"torch {v} is a {labels[b]} build on an AMD GPU machine", detail, evidence=("torch version",),
                   fix=fix, links=("https://pytorch.org/get-started/locally/",))
    elif plat == "nvidia":
        # A CPU build cannot use the GPU either: as on AMD machines, that fails the GPU check (textgen#645).
        if os_family(f) == "windows":
            fix = Fix("On Windows, PyPI's torch is the CPU build: install torch, torchvision and torchaudio together "
                      "from PyTorch's CUDA index for this driver (https://download.pytorch.org/whl/cuXYZ, the CUDA "
                      "version pytorch.org's selector lists that the driver supports: `nvidia-smi` shows its CUDA "
                      "version), with --force-reinstall.")
        yield fail(f"torch {v} is a {labels[b]} build on an NVIDIA GPU machine", "It cannot use the NVIDIA GPU.",
                   fix=fix)


# Variables that tell an installer where torch comes from: a launcher's own install command (AUTOMATIC1111, Forge and
# SD.Next run TORCH_COMMAND when torch is missing) and pip's and uv's index settings.
INDEX_VARS = ("TORCH_COMMAND", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
              "UV_DEFAULT_INDEX", "UV_INDEX")


@check("torch-configured-index", "torch",
       "The installed torch is the build this environment's install settings ask for.",
       "A launcher's TORCH_COMMAND or PIP_INDEX_URL naming a ROCm index says the machine is meant to run a ROCm torch; "
       "a CUDA or CPU torch found there came from elsewhere (a requirements file, a plain `pip install`), and the "
       "launcher does not replace it: it runs its install command only when torch is missing.",
       "Reinstall torch from the index those settings name.")
def torch_configured_index(f: Facts) -> Iterable[Finding]:
    asked = [(n, m.group(0).rstrip("/")) for n in INDEX_VARS
             if (v := f.env_var(n)) and (m := knowledge.ROCM_INDEX_URL.search(v))]
    if not asked:
        yield skip("no install setting in the evidence names a ROCm index")
        return
    b, v = torch_build(f), torch_version(f)
    if b not in ("cuda", "cpu"):
        yield skip(f"torch build is {b}" if b != "unknown" else "torch build unknown")
        return
    if accelerator(f) == "amd":
        yield skip("an AMD GPU is shown: see 'torch-build-mismatch'")
        return
    name, index = asked[0]
    label = "CUDA" if b == "cuda" else "CPU-only"
    rt = f.runtime.value if f.runtime.found else None
    # Fail only where torch itself says it has no GPU (is_cuda_available False): the setting says what was meant, the
    # runtime that it is not working. No command: the GPU is not shown, so the index comes from the user's own setting,
    # in words (stable-diffusion-webui#15542: torch 2.2.2+cu121 under TORCH_COMMAND=… rocm5.7).
    sev = fail if rt is not None and rt.is_available is False else warn
    yield sev(f"torch {v} is a {label} build, but {name} installs torch from a ROCm index ({index})",
              "A launcher runs its install command only when torch is missing, and pip keeps an installed torch that "
              "satisfies the requirement, so the build that came first stays.",
              evidence=("env", "torch version"),
              fix=Fix(f"In this environment, replace torch with the build {name} asks for: `{pip(f)} install "
                      f"--force-reinstall torch torchvision --index-url {index}` (an index that no longer exists needs a "
                      "current ROCm index for this GPU, https://pytorch.org/get-started/locally/)."))


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
        if r.error:
            yield fail("torch could not be inspected", r.error, evidence=("runtime probe",))
        elif r.is_available:
            yield ok("torch.cuda.is_available() is True (torch version not recorded)")
        elif r.is_available is False:
            yield skip("torch.cuda.is_available() is False; the torch build is unknown",
                       "Paste `python -m torch.utils.collect_env` to tell why.")
        else:
            yield skip("what torch sees is unknown")
        return
    plat = accelerator(f)
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
        if expected and r.devices and len(r.devices) < expected and not hidden:  # unlisted devices: not 'sees 0'
            yield warn(f"torch sees {len(r.devices)} of {expected} GPUs", names,
                       fix=Fix("A GPU whose render node cannot be opened is skipped silently; see 'render-access'."))
        elif r.devices:
            yield ok(f"torch sees {len(r.devices)} GPU(s): {names}")
        else:
            yield ok("torch.cuda.is_available() is True", "The devices were not listed.")
        return
    if r.is_available is None and not r.error:
        yield skip("whether torch sees a GPU is unknown", "Paste `python -c 'import torch; print(torch.cuda.is_available())'`.")
        return
    why = r.error or "torch.cuda.is_available() returned False"
    if plat not in ("amd", "nvidia"):
        # No GPU evidence in this snapshot (no PCI/sysfs/rocminfo/nvidia-smi facts): "does not see a GPU" may be right
        # for a machine without one, so no failure and no fix from an unknown (found by the delete-any-subset property
        # test: a WSL capture with its files and commands removed).
        yield skip(f"torch {r.torch_version} sees no GPU; whether this machine has one is unknown", why)
        return
    want = {"amd": "rocm", "nvidia": "cuda"}.get(plat)
    if torch_build(f) not in ("rocm", "cuda") or (want and torch_build(f) != want):
        yield skip(f"torch {r.torch_version} is not a build for this GPU (see 'torch-build-mismatch')")
        return
    yield fail(f"torch {r.torch_version} does not see any GPU", why, evidence=("runtime probe",),
               fix=Fix("Fix the failing driver/access/override findings above; to see the runtime's reason, run:",
                       ("AMD_LOG_LEVEL=3 HSAKMT_DEBUG_LEVEL=7 python -c 'import torch; print(torch.cuda.is_available())'",)))


@check("torch-family-mismatch", "torch", "torchvision/torchaudio come from the same build and release as torch.",
       "A PyPI torchvision next to a ROCm torch pulls a CUDA torch back in, or fails with "
       "'operator torchvision::nms does not exist'.",
       "Install torch, torchvision and torchaudio together from one index.", needs=("python",), ok_is_evidence=False)
def torch_family_mismatch(f: Facts) -> Iterable[Finding]:
    env = needed(f.python)
    torch = env.dist("torch")
    if torch is None:
        yield skip("torch not installed")
        return
    if not _known_tag(torch.local):
        yield skip(f"torch {torch.version} is a source build", "Its local version is a git hash, not a wheel index tag.")
        return
    bad = []
    for name in ("torchvision", "torchaudio"):
        d = env.dist(name)
        if d is None or not _known_tag(d.local) or (not d.local and ".dev" in d.version):
            # (a nightly without a build tag, `torchvision 0.25.0.dev20251025` beside torch …+cu130: a local or
            # source build whose index cannot be told, triton-lang/triton#8539; not compared)
            continue
        pin = d.pinned({"torch"})
        # PyPI's own torchvision/torchaudio (no local tag) are the CUDA builds on Linux, the pair of a +cuXYZ torch of
        # the same release (torch 2.4.1+cu121 beside torchvision 0.19.1 works; invoke-ai/InvokeAI#7520): only the
        # version pin is compared there.
        pypi_cuda_pair = not d.local and build_tag(torch.local).startswith("cu")
        if build_tag(d.local) != build_tag(torch.local) and not pypi_cuda_pair:
            bad.append(f"{name} {d.version} (build '{d.local or 'PyPI default'}') vs torch {torch.version}")
        elif pin and pin[1] and Version(torch.version.split("+")[0]) not in _spec(pin[1]):
            bad.append(f"{name} {d.version} requires torch{pin[1]}, installed {torch.version}")
    if not bad:
        yield ok("torch family consistent")
        return
    url = torch_index_url(torch.version)
    index = f" --index-url {url}" if url else ""
    # A nightly is only on its nightly index, which is not known here: a command without it would search PyPI.
    fix = (Fix("Reinstall torchvision/torchaudio from the nightly index torch came from, in the same command as torch "
               "(`--pre … --index-url <that nightly index>`).") if not url and ".dev" in torch.version else
           Fix("Reinstall them together from torch's index.",
               (f"{pip(f)} install --force-reinstall torch=={torch.version} torchvision torchaudio{index}",)))
    yield fail("torch family packages from different builds", "; ".join(bad), evidence=("python",), fix=fix)


def _known_tag(local: str) -> bool:
    """'' (PyPI's default build) or an index tag (rocm6.4, cu128, cpu); not a source build's git hash."""
    return not local or build_tag(local) != local or local.startswith(("rocm", "cu", "cpu", "xpu"))


def _spec(text: str):  # type: ignore[no-untyped-def]
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


@check("nvml-with-rocm-torch", "torch", "No NVIDIA management library (pynvml / nvidia-ml-py) next to a ROCm torch.",
       "Libraries that detect the GPU vendor by importing NVML can take an AMD machine for an NVIDIA one, and "
       "pynvml calls fail with 'NVML Shared Library Not Found'.",
       "Uninstall it if nothing on this AMD machine needs it.", needs=("python",), ok_is_evidence=False)
def nvml_with_rocm_torch(f: Facts) -> Iterable[Finding]:
    env = needed(f.python)
    present = [n for n in ("pynvml", "nvidia-ml-py") if env.dist(n)]
    if torch_build(f) != "rocm":
        yield skip("not a ROCm torch" if torch_build(f) != "unknown" else "torch build unknown")
        return
    if not present:
        if env.distributions_complete:
            yield ok("no NVML bindings next to a ROCm torch")
        else:
            yield skip("package list incomplete", "Paste `python -m pip list` (unfiltered).")
        return
    yield warn(f"{' and '.join(present)} installed next to a ROCm torch",
               "Packages that probe NVML to pick a platform may choose the CUDA path on this AMD machine.",
               fix=Fix("Remove it unless a tool you use requires it.", (f"{pip(f)} uninstall -y {' '.join(present)}",)))


@check("torchvision-ops-error", "torch", "torchvision's compiled operators load with this torch.",
       "'operator torchvision::nms does not exist' means torchvision's C++ library was built for another torch (a "
       "PyPI/CUDA torchvision beside a ROCm torch, or another release): the import dies (ROCm/pytorch#3109, "
       "utensils/comfyui-nix#46).", "Reinstall torchvision together with torch from torch's index.")
def torchvision_ops_error(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "torchvision-op-missing")
    if not errs:
        yield skip("no 'torchvision::nms does not exist' error in the evidence")
        return
    version = torch_version(f)
    url = torch_index_url(version) if version else None
    # A command only with torch's exact version and its index (both found); otherwise the same advice in words.
    cmds = ((f"{pip(f)} install --force-reinstall torch=={version} torchvision --index-url {url}",)
            if version and url else ())
    yield fail("torchvision's operators are not built for this torch (torchvision::nms does not exist)",
               f"torch {version or '(version not shown)'}; the torchvision beside it comes from another build or "
               "release, so importing it fails.", evidence=quote(errs),
               fix=Fix("Reinstall torchvision from the same index and release as torch, in one command with torch"
                       + ("." if cmds else " (`pip install --force-reinstall torch==<torch's version> torchvision "
                                          "--index-url <torch's index>`)."), cmds))


CHECKS = (torch_missing, torch_build_mismatch, torch_configured_index, torch_sees_gpu, torch_family_mismatch,
          torchvision_ops_error, nvml_with_rocm_torch)
