"""The error text the user already has (pasted tracebacks and logs, the runtime probe's error): each known message
(knowledge/data/errors.json) narrows the cause; the facts decide between what is left, and only facts that were
found go into a fix command (issue #10). An error whose cause the evidence cannot decide gives a warning that says
what to paste, never a guessed command.

No check here says `ok`: a paste without an error message proves nothing about the machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rocm_triton_doctor.check.checks.base import check, fail, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.checks.torch import install_command, pip
from rocm_triton_doctor.check.facts import ErrorText, Facts
from rocm_triton_doctor.check.facts.errors import (CODE_OBJECT, code_object_errors, quote,
                                                   with_signature)
from rocm_triton_doctor.check.facts.platform import amd_host, nvidia_host, os_family
from rocm_triton_doctor.check.facts.python import torch_build
from rocm_triton_doctor.check.facts.rocminfo import parse_rocminfo
from rocm_triton_doctor.check.findings import Finding, Fix
from rocm_triton_doctor.knowledge import errors as known

DRIVER = ("amdgpu-sched-policy-invalid", "amdgpu-unknown-symbol", "amdgpu-fatal-init", "amdgpu-probe-enomem",
          "amdgpu-firmware-missing", "dkms-build-failed",
          "module-key-rejected", "kfd-pci-atomics", "hsa-incompatible-kernel")


def _sig_fix(sig_id: str, text: str = "") -> str:
    """The signature's fix, with what it matched in `text` filled in (ErrorSignature.fix_for), and its source."""
    s = known.by_id(sig_id)
    return f"{s.fix_for(text)} (source: {s.source})" if s else ""


@check("miopen-user-db", "errors", "MIOpen's sqlite user database is on a writable local disk.",
       "MIOpen keeps its find/perf DB in ~/.config/miopen and its kernel cache in ~/.cache/miopen; on an NFS/Lustre "
       "or read-only home (clusters, Singularity) sqlite fails with 'disk I/O error' / 'database disk image is "
       "malformed' and every convolution aborts (pytorch#143043, MIOpen#1878).",
       "Point MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR at a node-local directory.")
def miopen_user_db(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "miopen-sqlite")
    dirs = with_signature(f.errors, "miopen-dir-unwritable")
    if not errs and not dirs:
        yield skip("no MIOpen database error in the evidence")
        return
    if dirs and not errs:
        yield from _miopen_dir(dirs)
        return
    if all("memvfs" in e.text and not re.search(r"disk I/O error|malformed|locked", e.text) for e in errs):
        # `open memvfs: unable to open database file`: MIOpen's read-only SYSTEM database (loaded into an in-memory
        # VFS from the install's share/miopen/db), not the user DB that MIOPEN_USER_DB_PATH moves (MIOpen#1010:
        # the environment sat on network storage). Which file and where it lives decide the remedy.
        yield warn("MIOpen could not open its system database (memvfs)",
                   "This is the read-only kernel database shipped with MIOpen (torch's lib or /opt/rocm), not the "
                   "user database; seen when the environment sits on slow or network storage.",
                   evidence=quote(errs),
                   fix=Fix("Paste where the Python environment and torch's MIOpen live (`python -c 'import torch, os; "
                           "print(os.path.dirname(torch.__file__))'` and `df -h` of it); a copy on local disk is the "
                           "remedy when it is network storage."))
        return
    yield fail("MIOpen cannot use its sqlite user database (disk I/O error / malformed DB)",
               "MIOpen's user DB and kernel cache default to your home directory; sqlite's file locking fails on "
               "network or read-only filesystems and with several jobs sharing one DB.",
               evidence=quote(errs),
               fix=Fix("Give MIOpen a node-local writable directory (per job on a cluster: put the exports in the job "
                       "script) via MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR.",
                       ('export MIOPEN_USER_DB_PATH="/tmp/$USER/miopen-db" MIOPEN_CUSTOM_CACHE_DIR="/tmp/$USER/miopen-cache"',
                        'mkdir -p "$MIOPEN_USER_DB_PATH" "$MIOPEN_CUSTOM_CACHE_DIR"')),
               links=("https://rocm.docs.amd.com/projects/MIOpen/en/latest/conceptual/perfdb.html",
                      "https://github.com/pytorch/pytorch/issues/143043"))


def _miopen_dir(errs: tuple[ErrorText, ...]) -> Iterable[Finding]:
    """MIOpen could not create its database/cache directory (cmssw#51819: read-only cache dir; LUMI-AI-Guide#81: a
    shared /tmp, and torchrun ranks racing to create a fresh one). A MIOpen 'Warning' only costs the cache (kernels
    are rebuilt every run); an 'Error' aborts the operation."""
    only_warnings = all(re.search(r"Warning", line) for line in quote(errs))
    text = ("MIOpen could not create its user database / kernel cache directory: the path is not writable for this "
            "user, belongs to another user (a shared /tmp), or several processes race to create it.")
    fix = Fix("Give each user (on a cluster each job) a writable MIOpen directory and create it before the processes "
              "start, so that no rank has to.",
              ('export MIOPEN_USER_DB_PATH="/tmp/$USER/miopen-db" MIOPEN_CUSTOM_CACHE_DIR="/tmp/$USER/miopen-cache"',
               'mkdir -p "$MIOPEN_USER_DB_PATH" "$MIOPEN_CUSTOM_CACHE_DIR"'))
    links = ("https://rocm.docs.amd.com/projects/MIOpen/en/latest/conceptual/cache.html",)
    if only_warnings:
        yield warn("MIOpen cannot create its database directory (kernels are rebuilt every run)", text,
                   evidence=quote(errs), fix=fix, links=links)
    else:
        yield fail("MIOpen cannot create its database / cache directory", text, evidence=quote(errs), fix=fix,
                   links=links)


@check("nvml-bindings-error", "errors", "torch's device queries do not fall into the amdsmi path because NVML "
       "bindings are installed.", "With pynvml/nvidia-ml-py importable, torch 2.4's ROCm build takes the "
       "'NVML present' branch and calls amdsmi, which is not installed: NameError: name 'amdsmi' is not defined "
       "(pytorch#133259, fixed by pytorch PR#127528).", "Uninstall the NVML bindings from the environment.")
def nvml_bindings_error(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "amdsmi-nameerror")
    if not errs:
        yield skip("no amdsmi NameError in the evidence")
        return
    env = f.python.value if f.python.found else None
    names = [n for n in ("pynvml", "nvidia-ml-py") if env is not None and env.dist(n)] or ["pynvml", "nvidia-ml-py"]
    yield fail("torch's amdsmi path failed: NVML bindings (" + " / ".join(names) + ") beside a ROCm torch",
               "torch.cuda checks whether NVML can be imported; on a ROCm build that sends it to amdsmi, which is "
               "missing, and every device query raises NameError.",
               evidence=quote(errs),
               fix=Fix("Remove the NVML bindings from this environment (nothing on an AMD-only machine needs them), "
                       "or install the amdsmi Python package of your ROCm version.",
                       (f"{pip(f)} uninstall -y {' '.join(names)}",)),
               links=("https://github.com/pytorch/pytorch/issues/133259",))


@check("cuda-torch-error", "errors", "An NVIDIA-only error ('Found no NVIDIA driver', 'Torch not compiled with CUDA') "
       "on an AMD GPU machine.", "A CUDA or CPU build of torch cannot use an AMD GPU; pip installed it from PyPI or the "
       "wrong index.", "Reinstall torch, torchvision and torchaudio together from the ROCm index for this GPU.")
def cuda_torch_error(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "found-no-nvidia-driver", "torch-not-compiled-with-cuda")
    if not errs and any(g.integrated is False for g in amd_gpus(f)) and not nvidia_host(f):
        # A CUDA build's own device-count warning (cudaGetDeviceCount, c10/cuda/CUDAFunctions.cpp; a ROCm build says
        # hipGetDeviceCount, c10/hip/HIPFunctions.cpp) names the build but not the machine: only beside a discrete
        # AMD GPU and no NVIDIA GPU shown (an iGPU laptop with a GeForce would want its NVIDIA driver fixed instead).
        errs = with_signature(f.errors, "cuda-torch-device-count")
    if not errs:
        yield skip("no NVIDIA-driver / not-compiled-with-CUDA error in the evidence")
        return
    if torch_build(f) == "rocm":
        yield skip("torch is a ROCm build; the NVIDIA message comes from another program")
        return
    system = f.raw.get("system")
    if isinstance(system, dict) and system.get("xpu_available") is True and not amd_host(f):
        yield skip("torch runs on an Intel GPU (XPU) here; the CUDA-only message comes from code that calls torch.cuda")
        return
    if not amd_host(f):
        yield warn("torch is not a ROCm build (NVIDIA-only error)",
                   "On an AMD GPU machine this means a CUDA/CPU torch; which ROCm build fits depends on the GPU and the "
                   "Python: paste `rocminfo | grep gfx`, `python --version` and `python -m pip list | grep torch`.",
                   evidence=quote(errs))
        return
    cmd = install_command(f)
    yield fail("a CUDA/CPU torch on an AMD GPU machine",
               "The error is what a CUDA or CPU build of torch says when no NVIDIA GPU is present.",
               evidence=quote(errs),
               fix=Fix("Reinstall torch, torchvision and torchaudio together from the ROCm index"
                       + (" that carries this GPU." if cmd else " for this GPU (paste `rocminfo | grep gfx` and "
                          "`python --version` to get the command)."), (cmd,) if cmd else ()),
               links=("https://pytorch.org/get-started/locally/",))


@check("amdgpu-driver-error", "errors", "The kernel log shows no amdgpu/KFD initialisation error.",
       "amdgpu that fails to load (invalid module option, a DKMS module built for another kernel, firmware/IP "
       "discovery errors) leaves no /dev/kfd, so no ROCm program sees a GPU.",
       "Fix the cause the kernel log names; the finding quotes it.")
def amdgpu_driver_error(f: Facts) -> Iterable[Finding]:
    # Secure Boot's "Key was rejected" concerns whatever module was loaded: only an AMD one (amdgpu, amdttm, amdkcl …)
    # is this check's business.
    errs = tuple(e for e in with_signature(f.errors, *DRIVER)
                 if set(e.signatures) - {"module-key-rejected"} or re.search(r"'amd[\w-]*'", e.text))
    if not errs:
        yield skip("no amdgpu error in the evidence")
        return
    # GPUs a runtime enumerated (rocminfo/KFD, torch …): an amdgpu is running, whichever module it is
    running = [g for g in amd_gpus(f) if g.source.split(" ")[0] in ("rocminfo", "kfd", "torch", "amdgpu-arch")
               or g.source.startswith("/sys/")]
    for sig in dict.fromkeys(s for e in errs for s in e.signatures if s in DRIVER):
        s = known.by_id(sig)
        if s is None:
            continue
        hit = tuple(e for e in errs if sig in e.signatures)
        if sig == "dkms-build-failed" and running:
            # The runtime lists the GPU, so an amdgpu is running (the kernel's own): AMD's advice where DKMS does not
            # build is that driver (legacy-rocm-build#3036, #5905). Still a failure: the package is left broken for
            # every later upgrade, and a fail is not lowered by evidence (removing evidence never raises a verdict).
            yield fail("amdgpu-dkms does not build for this kernel (the GPU works through the kernel's own amdgpu)",
                       f"The runtime lists {', '.join(sorted({g.gfx or '?' for g in running}))}.",
                       evidence=quote(hit),
                       fix=Fix("Keep the in-kernel driver: remove the failing amdgpu-dkms (or reinstall ROCm with "
                               "amdgpu-install --usecase=rocm --no-dkms); DKMS is needed only where the kernel's "
                               "driver is too old for the GPU.", needs_sudo=True), links=(s.source,))
            continue
        yield fail(f"amdgpu did not initialise: {s.meaning}", evidence=quote(hit),
                   fix=Fix(_sig_fix(sig), needs_sudo=True, needs_reboot=True), links=(s.source,))


@check("amdsmi-missing", "errors", "The amdsmi Python bindings are importable where a program needs them.",
       "vLLM finds a ROCm GPU through amdsmi: without it ('No module named amdsmi') it falls back to no platform "
       "and runs nothing on the GPU (vllm#24576).", "Install the amdsmi package of the installed ROCm version.")
def amdsmi_missing(f: Facts) -> Iterable[Finding]:
    mixed = with_signature(f.errors, "amdsmi-lib-mismatch")
    if mixed:
        # amdsmi#186: the CLI of /opt/rocm-7.1.1, a pip amdsmi in /usr/local, libamd_smi.so of /opt/rocm-7.0.1.
        yield fail("the amdsmi Python bindings do not match the libamd_smi.so they load",
                   "They come from different ROCm releases (a pip-installed or older amdsmi package, or another "
                   "ROCm on the library path), so importing amdsmi fails: amd-smi and the programs using it break.",
                   evidence=quote(mixed),
                   fix=Fix("Remove the stray amdsmi package and install the one shipped with the ROCm in use "
                           "(`pip uninstall amdsmi`, then `pip install /opt/rocm/share/amd_smi` with that ROCm's "
                           "Python), or put only that ROCm's lib on the library path."),
                   links=("https://github.com/ROCm/amdsmi/issues/186",))
        return
    errs = with_signature(f.errors, "amdsmi-module-missing")
    if not errs:
        yield skip("no missing-amdsmi error in the evidence")
        return
    fatal = any(re.search(r"UnspecifiedPlatform|No platform detected|Failed to infer device type", e.text) for e in errs)
    yield (fail if fatal else warn)(
        "the amdsmi Python bindings are missing" + (": the program found no GPU platform" if fatal else ""),
        "Programs that detect the AMD GPU through amdsmi (vLLM) see no ROCm platform without it.",
        evidence=quote(errs),
        fix=Fix("Install the amdsmi Python package of the installed ROCm version into this environment: it ships "
                "with ROCm (`pip install /opt/rocm/share/amd_smi`); a PyPI amdsmi must match that ROCm version."))


@check("rocm-glibc-mismatch", "errors", "The ROCm binaries run on this OS release's C/C++ runtime.",
       "'GLIBC_2.34 not found (required by …/libhsa-runtime64.so)': ROCm packages built for a newer distribution "
       "release than this one; nothing in them loads (legacy-rocm-build#2043).",
       "Install the ROCm packages for this OS release, or an OS release ROCm supports.")
def rocm_glibc_mismatch(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "rocm-needs-newer-glibc")
    if not errs:
        yield skip("no glibc/libstdc++ version error from a ROCm binary in the evidence")
        return
    injected = next((m.group(1) for e in errs
                     if (m := re.search(r"required by /\.singularity\.d/libs/(\S+?)\)", e.text))), None)
    if injected:
        # Apptainer/Singularity's --rocm binds the HOST's ROCm libraries into /.singularity.d/libs, where the image's
        # older libstdc++ cannot load them (apptainer/apptainer#1622).
        yield fail(f"the host's {injected}, bound into the container by --rocm, needs a newer libstdc++ than the "
                   "image has", "Apptainer's --rocm puts the host's ROCm libraries in front of the image's own.",
                   evidence=quote(errs),
                   fix=Fix(f"Run without --rocm and bind the devices instead (`--bind /dev/kfd,/dev/dri`), so the "
                           f"image uses its own ROCm rather than the host's {injected}; or use an image whose "
                           "libstdc++ is as new as the host's."))
        return
    yield fail("the ROCm binaries need a newer glibc/libstdc++ than this OS has",
               "They were built for a newer distribution release: the loader refuses them before any GPU work.",
               evidence=quote(errs),
               fix=Fix("Install the ROCm packages built for this OS release (the amdgpu-install package for your "
                       "Ubuntu/RHEL version, from repo.radeon.com, linked against this OS's glibc), or move to an OS "
                       "release ROCm supports; keep "
                       "the torch wheel's own ROCm if you only need PyTorch."))


@check("container-host-no-kfd", "errors", "The container host has /dev/kfd to pass through.",
       "docker refuses --device=/dev/kfd ('error gathering device information while adding custom device') when "
       "the host has none: Docker Desktop's VM (Windows, macOS), a host without amdgpu/KFD, WSL without AMD's WSL "
       "runtime (ROCm#1893).", "Run ROCm containers on a Linux host whose amdgpu driver exposes /dev/kfd.")
def container_host_no_kfd(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "docker-no-kfd-device")
    if not errs:
        yield skip("no container device error in the evidence")
        return
    windows = os_family(f) == "windows"
    yield fail("the container host has no /dev/kfd to pass through",
               ("Docker here runs on Windows (Docker Desktop's Linux VM has no AMD GPU driver). " if windows else "")
               + "ROCm containers need a Linux host with the amdgpu driver loaded; check `ls -l /dev/kfd` on the host.",
               evidence=quote(errs),
               fix=Fix("Run the container on a native Linux host with amdgpu (or, on Windows, use AMD's ROCm on WSL "
                       "setup inside a supported WSL distribution instead of Docker Desktop)."))


# Signatures the checks above (and the access/platform/rocm checks) decide; the rest are reported by known-error.
CLAIMED = {"miopen-sqlite", "miopen-dir-unwritable", "apt-distro-rocm-package", "amdsmi-lib-mismatch", "amdsmi-nameerror",
           "found-no-nvidia-driver",
           "torch-not-compiled-with-cuda", "cuda-torch-device-count", *DRIVER,
           "ptxas-on-amd", "ptxas-unknown-arch", "triton-hip-lld-missing", "rccl-iommu-pt-missing",
           "ray-visible-devices-mismatch", "pip-no-matching-torch", "pip-torch-version-not-on-index",
           "docker-no-kfd-device", "installer-cpu-fallback", "torchvision-op-missing",
           *CODE_OBJECT,
           "pip-rocm-triton-not-on-index", "amdsmi-module-missing", "rocm-needs-newer-glibc",
           "kfd-open-permission-denied", "kfd-open-no-memory", "kfd-asic-not-supported", "amdgpu-get-auth-failed",
           "amdgpu-pcie-atomics"}


@check("known-error", "errors", "Says what a known error message in the evidence means when no other check decides it.",
       "Messages such as HSA_STATUS_ERROR_OUT_OF_RESOURCES, 'No HIP GPUs are available' or a memory access fault "
       "have several causes; the message narrows them and says which facts decide.",
       "Paste what the finding asks for; the fix depends on which cause the facts show.")
def known_error(f: Facts) -> Iterable[Finding]:
    decided = set(code_object_errors(f.errors))
    ids = list(dict.fromkeys(s for e in (f.errors.value or ()) if f.errors.found and e not in decided
                             for s in e.signatures if s not in CLAIMED))
    if not ids:
        yield skip("no other known error message in the evidence")
        return
    windows = os_family(f) == "windows"
    wsl = f.wsl.found and bool(f.wsl.value)
    said = 0
    for sig in ids:
        s = known.by_id(sig)
        if s is None:
            continue
        hit = tuple(e for e in f.errors.value or () if sig in e.signatures)
        causes = ", ".join(c.cause for c in s.causes)
        fix = _sig_fix(sig, hit[0].text)
        if wsl and "/dev/kfd" in s.meaning + fix:
            # Under WSL the GPU is reached through /dev/dxg and there is no /dev/kfd to open or list: a reading
            # built on KFD does not apply, and the 'wsl' check reads these failures (rocm-systems#1153:
            # OUT_OF_RESOURCES on a WSL machine without an AMD GPU).
            continue
        said += 1
        if sig == "amdgpu-gpu-hang" and (dkms := _dkms_driver(f)):
            # AMD's out-of-tree driver hanging a GPU the running kernel's own amdgpu drives: the maintainers' first
            # step is the kernel's driver (ROCm/ROCm#5908: amdgpu-dkms 6.16.13 on the 6.14 HWE kernel hung an R9700;
            # removing it fixed it, and AMD agreed that kernel supports the GPU).
            fix += (f" AMD's amdgpu-dkms driver is loaded ({dkms}): where the running kernel's own amdgpu supports "
                    "this GPU, remove amdgpu-dkms and boot the kernel's driver (amdgpu-install --usecase=rocm "
                    "--no-dkms keeps ROCm's userspace) before anything else.")
        if windows and re.search(r"rocminfo|HSA_|override", fix):
            # Linux tools and HSA variables in a fix do not exist on Windows' HIP SDK (hip#3899, Windows).
            fix += (" On Windows: hipInfo.exe and amdgpu-arch.exe of the HIP SDK take rocminfo's place, and "
                    "the HSA override variables are not read there.")
        if s.fails:
            yield fail(f"known failure: {s.meaning}", f"Cause: {causes}." if causes else "", evidence=quote(hit),
                       fix=Fix(fix), links=(s.source,))
        else:
            yield warn(f"known error: {s.meaning}", f"Possible causes: {causes}." if causes else "", evidence=quote(hit),
                       fix=Fix(fix), links=(s.source,))
    if not said:
        yield skip("under WSL: the known errors in the evidence are read by the 'wsl' check (no /dev/kfd there)")


def _dkms_driver(f: Facts) -> str | None:
    """What shows AMD's out-of-tree amdgpu (amdgpu-dkms) is the running driver: /sys/module/amdgpu/version (only the
    DKMS build has it), or rocminfo's `ROCk module version X is loaded` (the in-kernel driver prints no version)."""
    if f.amdgpu_version.found and f.amdgpu_version.value:
        return f"amdgpu {f.amdgpu_version.value.strip()}"
    # The rocminfo fact keeps no report for an excerpt without agents (a paste cut after its header), so such a text
    # is read by the same parser here.
    rep = f.rocminfo.value or parse_rocminfo("\n".join(c.stdout for c in f.commands if c.name == "rocminfo"))
    return f"ROCk module version {rep.rock_version}" if rep.rock_version else None


# GPU runtime error words (HIP, HSA, MIOpen, rocBLAS/hipBLASLt, llama.cpp's "ROCm error"): an error that says the GPU
# stack failed, unlike an application's own ValueError about its model. A kernel's memory fault (an aperture
# violation, an illegal address) is left out: on a machine whose stack is right it is the program's bug (pytorch#174282:
# one ATen kernel faulting on two supported Instinct GPUs with PyTorch's own wheel), so it is not a setup warning.
_RUNTIME_ERROR = re.compile(r"\bmiopenStatus(?!Success)\w+|\bhipError(?!Success|IllegalAddress|LaunchFailure)\w+|"
                            r"\bHSA_STATUS_ERROR(?!_MEMORY_APERTURE_VIOLATION|_MEMORY_FAULT|_EXCEPTION)\w*|"
                            r"\brocBLAS error|\bhipBLASLt error|\bMIOpen(?:\(HIP\))?:? Error\b|\bHIP error\b|"
                            r"\bROCm error\b|"
                            # the process itself crashing (TheRock#2850: torch saw gfx1151, then `Segmentation fault
                            # (core dumped) python test.py`): the run failed, for a reason the text does not show
                            r"\bSegmentation fault\b|\bSIGSEGV\b|\bAborted \(core dumped\)|"
                            # Windows' form of it (Comfy-Org/ComfyUI#13593: `a fatal Windows access violation` in
                            # torch.cuda.is_available())
                            r"\b[Aa]ccess violation\b")


@check("runtime-error-unexplained", "errors",
       "No GPU runtime error or crash in the evidence is left without a reading.",
       "A HIP, HSA, MIOpen or rocBLAS error that no known message matches, or the process crashing (a segfault, an "
       "abort with a core dump), still says the run failed: the machine is not shown healthy, and the finding says "
       "what would decide the cause.",
       "Paste what the finding asks for.")
def runtime_error_unexplained(f: Facts) -> Iterable[Finding]:
    errs = tuple(e for e in (f.errors.value or ()) if f.errors.found and not e.signatures and _RUNTIME_ERROR.search(e.text))
    if not errs:
        yield skip("no GPU runtime error or crash without a known reading")
        return
    word = _RUNTIME_ERROR.search(errs[0].text)
    # No command: the message alone has many causes (comfyui#12142's miopenStatusInternalError on Windows).
    yield warn(f"a runtime failure no known message explains: {word.group(0) if word else 'see the evidence'}",
               "The program failed in this run, for a reason this message alone does not decide. Paste the whole "
               "log from the program's start, the torch build (`python -c 'import torch; print(torch.__version__, "
               "torch.version.hip)'`) and the GPU (`rocminfo | grep -E \"Marketing|gfx\"`, or hipInfo on Windows).",
               evidence=quote(errs))


@check("pcie-atomics", "errors", "Every GPU has PCIe atomic operations on its path to the CPU.",
       "amdgpu logs 'PCIE atomic ops is not supported' for a GPU whose slot, riser, bridge or virtual root port does not "
       "route PCIe AtomicOps. ROCm runs GFX9 and newer without them, but device hostcalls, atomics on host memory and "
       "some RCCL paths fail on that GPU (legacy-rocm-build#6520: the first all-reduce failed only on the GPU in the "
       "chipset slot).",
       "Move the GPU to a CPU-attached slot, or keep hostcall and multi-GPU work off it.")
def pcie_atomics(f: Facts) -> Iterable[Finding]:
    hit = with_signature(f.errors, "amdgpu-pcie-atomics")
    if not hit:
        yield skip("no 'PCIE atomic ops is not supported' line in the evidence (the kernel log would show it)")
        return
    where = sorted(set(re.findall(r"\b[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d\b", " ".join(e.text for e in hit))))
    gpu = f"the GPU at {', '.join(where)}" if where else "a GPU"
    s = known.by_id("amdgpu-pcie-atomics")
    fix = Fix(_sig_fix("amdgpu-pcie-atomics"), (f"sudo lspci -vvv -s {where[0]} | grep -i atomic",) if where else (),
              needs_sudo=True)
    links = (s.source,) if s else ()
    failed = tuple(e for e in f.errors.value or () if f.errors.found and _RUNTIME_ERROR.search(e.text))
    if failed:
        # A GPU run failed on a machine where one GPU has no PCIe atomics: that is the first thing a maintainer rules
        # out (legacy-rocm-build#6520: hipErrorIllegalState on the chipset-slot GPU only).
        yield fail(f"{gpu} has no PCIe atomic operations, and a GPU run failed",
                   "Work that needs atomics across PCIe (hostcalls, RCCL collectives) fails on that GPU.",
                   evidence=quote(hit + failed), fix=fix, links=links)
        return
    yield warn(f"{gpu} has no PCIe atomic operations",
               "GFX9 and newer GPUs run ROCm without them, but hostcalls, atomics on host memory and some RCCL paths "
               "fail on that GPU.", evidence=quote(hit), fix=fix, links=links)


CHECKS = (miopen_user_db, nvml_bindings_error, cuda_torch_error, amdgpu_driver_error, amdsmi_missing, rocm_glibc_mismatch,
          container_host_no_kfd, known_error, runtime_error_unexplained, pcie_atomics)
