"""The error text the user already has (pasted tracebacks and logs, the runtime probe's error): each known message
(knowledge/data/errors.json) narrows the cause; the facts decide between what is left, and only facts that were
found go into a fix command (issue #10). An error whose cause the evidence cannot decide gives a warning that says
what to paste, never a guessed command.

No check here says `ok`: a paste without an error message proves nothing about the machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus, last_rocm, native_rocm, newest_wheel_for, torch_arch_list
from rocm_triton_doctor.check.checks.torch import install_command, pip
from rocm_triton_doctor.check.facts import ErrorText, Facts, Gpu
from rocm_triton_doctor.check.facts.errors import (CODE_OBJECT, code_object_errors, named_isas, quote,
                                                   supported_targets, with_signature)
from rocm_triton_doctor.check.facts.platform import amd_host
from rocm_triton_doctor.check.facts.python import torch_build
from rocm_triton_doctor.check.findings import Finding, Fix
from rocm_triton_doctor.knowledge import errors as known

DRIVER = ("amdgpu-sched-policy-invalid", "amdgpu-unknown-symbol", "amdgpu-fatal-init", "amdgpu-probe-enomem",
          "amdgpu-firmware-missing", "dkms-build-failed",
          "module-key-rejected", "kfd-pci-atomics", "hsa-incompatible-kernel")
VAR = "HSA_OVERRIDE_GFX_VERSION"


def _sig_fix(sig_id: str) -> str:
    s = known.by_id(sig_id)
    return f"{s.fix} (source: {s.source})" if s else ""


def _first_sig(errs: tuple[ErrorText, ...], ids: tuple[str, ...]) -> str:
    return next((s for e in errs for s in e.signatures if s in ids), ids[0])


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


@check("triton-vendor-error", "errors", "Triton does not compile with NVIDIA's ptxas on an AMD machine.",
       "A ptxas error means the CUDA backend of Triton ran: the PyPI `triton` wheel replaced torch's ROCm Triton, or "
       "torch itself is a CUDA build.", "Reinstall the Triton torch pins (pytorch-triton-rocm) from torch's index.")
def triton_vendor_error(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "ptxas-on-amd")
    if not errs:
        yield skip("no ptxas error in the evidence")
        return
    if amd_host(f) is not True and torch_build(f) == "cuda":
        # A CUDA torch and no sign of an AMD GPU: ptxas is Triton's own backend here (triton-lang/triton#8539, a DGX
        # Spark); what its error means is `triton-ptxas-arch`'s and the NVIDIA checks' business.
        yield skip("a CUDA torch with no AMD GPU in the evidence: ptxas is this machine's backend")
        return
    from rocm_triton_doctor.check.checks.triton import _reinstall

    cmd = _reinstall(f) if torch_build(f) == "rocm" and amd_host(f) else None
    if cmd is None:
        yield warn("Triton ran its NVIDIA (ptxas) backend",
                   "On an AMD machine that is a CUDA torch or PyPI's `triton` beside a ROCm torch; paste "
                   "`python -m pip list | grep -iE 'torch|triton'` and `rocminfo | grep gfx` to tell which.",
                   evidence=quote(errs))
        return
    yield fail("Triton ran its NVIDIA (ptxas) backend beside a ROCm torch", evidence=quote(errs),
               fix=Fix("Remove the foreign triton and reinstall the one torch pins.",
                       (f"{pip(f)} uninstall -y triton", cmd)))


@check("pip-no-torch-wheel", "errors", "pip found a torch wheel on the index it was given.",
       "'Could not find a version that satisfies the requirement torch (from versions: none)': the index has no torch "
       "wheel for this Python version (or OS): ROCm indexes publish cp310-cp312/313 wheels for Linux only.",
       "Use a Python the index publishes wheels for (3.12 is the safe choice) in a virtual environment.")
def pip_no_torch_wheel(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "pip-no-matching-torch")
    if not errs:
        yield skip("no pip 'no matching distribution' error for torch in the evidence")
        return
    env = f.python.value if f.python.found else None
    py = env.version if env and env.version else None
    indexes = env.pip_indexes if env else ()
    index = next((u for u in indexes if "rocm" in u or "radeon" in u), indexes[0] if indexes else None)
    minor = tuple(int(x) for x in py.split(".")[:2]) if py and py.count(".") >= 1 and py.split(".")[1].isdigit() else None
    if minor is not None and (3, 10) <= minor <= (3, 12):
        yield warn(f"pip found no torch on {index or 'the index'} for Python {py}",
                   "This Python is one the ROCm indexes publish wheels for, so the index URL (its ROCm version, "
                   "nightly vs stable) or the OS is the likely cause; paste the full pip command and `uname -a`.",
                   evidence=quote(errs))
        return
    cmds: tuple[str, ...] = ()
    if index:
        cmds = ("python3.12 -m venv ~/rocm-env",
                (f"~/rocm-env/bin/python -m pip install {'--pre ' if 'nightl' in index else ''}torch torchvision "
                 f"torchaudio --index-url {index}"))
    yield fail(f"no torch wheel for Python {py or '(this version)'} on {index or 'the index pip searched'}",
               "ROCm indexes publish wheels for a few Python versions only (3.10-3.12 everywhere, 3.13 on recent "
               "releases); pip's 'from versions: none' means none matches this interpreter.",
               evidence=quote(errs),
               fix=Fix("Create a virtual environment with Python 3.12 and install from the same index"
                       + ("." if index else " (paste the pip command to get it spelled out)."), cmds))


@check("pip-torch-version-missing", "errors", "The pinned torch version exists on the index pip was given.",
       "'Could not find a version that satisfies the requirement torch==2.4.1 (from versions: 2.2.0+rocm5.6, …)': "
       "each ROCm index publishes only the torch releases built for its ROCm; an installer that then falls back "
       "to PyPI gets a CUDA torch (InvokeAI#7146).",
       "Pin a version the index lists, or use the ROCm index that publishes the pinned version.")
def pip_torch_version_missing(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "pip-torch-version-not-on-index")
    if not errs:
        yield skip("no pip 'version not on this index' error for torch in the evidence")
        return
    m = next((re.search(r"requirement torch==(?P<want>\S+) \(from versions: (?P<have>[^)]*)\)", e.text) for e in errs), None)
    if m is None:
        yield skip("the pinned version could not be read from the error")
        return
    want, have = m.group("want"), [v.strip() for v in m.group("have").split(",") if v.strip()]
    env = f.python.value if f.python.found else None
    index = next((u for u in (env.pip_indexes if env else ()) if "rocm" in u), None)
    rel = knowledge.torch_release(want)
    with_it = [i for i in (rel.rocm_indexes if rel else ()) if i in knowledge.rocm_indexes()]
    if with_it:
        best = with_it[-1]
        # Words, not a command: another ROCm index is another ROCm release, and whether it supports this GPU is
        # unknown here (fix safety: no index the text did not name while the hardware is unknown).
        text = (f"torch {want} is published on the {', '.join(with_it)} index(es), not on {index or 'this one'} "
                f"(which has {', '.join(have[-3:])}). Either install it with `--index-url "
                f"{knowledge.index_url(best)}` as the only index (once `rocm-triton-doctor check` confirms ROCm "
                f"{best[4:]} supports this GPU), or pin a version this index lists.")
    else:
        text = (f"Pin one of the versions the index lists ({', '.join(have[-3:])}), or use an index that publishes "
                f"torch {want} (`--index-url`, as the only index).")
    yield fail(f"torch {want} is not on {index or 'the index pip searched'}", "An installer that then falls back "
               "to PyPI installs PyPI's torch, a CUDA build on Linux.", evidence=quote(errs), fix=Fix(text))


@check("pip-rocm-triton-missing", "errors", "pip found the ROCm Triton that torch pins.",
       "A ROCm torch pins its own Triton build (triton==3.5.1+rocm7.2.0…, or pytorch-triton-rocm): only the ROCm index "
       "publishes it, so an install that searches PyPI alone fails or takes PyPI's NVIDIA Triton (textgen#7436).",
       "Install torch and its Triton from the ROCm index torch came from.")
def pip_rocm_triton_missing(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "pip-rocm-triton-not-on-index")
    if not errs:
        yield skip("no pip error for torch's pinned ROCm Triton in the evidence")
        return
    m = next((re.search(r"requirement (?:triton|pytorch-triton-rocm)==(?P<pin>\S+?\+rocm(?P<rocm>\d+\.\d+)[^\s)]*)",
                        e.text) for e in errs), None)
    # The older pin names the package (pytorch-triton-rocm==2.2.0); the ROCm release is then the requiring torch's
    # local version: `(from torch==2.2.0+rocm5.7)` (pytorch#118233, a torch wheel installed from a file).
    by = next((re.search(r"\(from torch==\S+?\+rocm(?P<rocm>\d+\.\d+)", e.text) for e in errs), None)
    if by is None:  # uv: `torch==2.5.1+rocm6.2 depends on pytorch-triton-rocm{markers}==3.1.0` (astral-sh/uv#10712)
        by = next((re.search(r"torch==\S+?\+rocm(?P<rocm>\d+\.\d+)\S*\s+depends on", e.text) for e in errs), None)
    rocm = m.group("rocm") if m else (by.group("rocm") if by else None)
    if m is None:
        m = next((re.search(r"requirement (?P<pin>pytorch-triton-rocm==[^\s)]+)", e.text) for e in errs), None)
    if m is None:  # uv names the package with its environment markers between the name and the version
        uv = next((re.search(r"no version of (?P<pkg>pytorch-triton-rocm|triton)(?:\{[^}]*\})?==(?P<ver>[\w.+]+)", e.text)
                   for e in errs), None)
        pin = f"{uv.group('pkg')}=={uv.group('ver')}" if uv else None
    else:
        pin = m.group("pin")
    name = pin.split("==")[0] if pin and pin.startswith("pytorch-triton-rocm") else "triton"
    where = f"https://download.pytorch.org/whl/rocm{rocm}" if rocm else "the ROCm index torch came from"
    # Words, not a command: the torch and Python in question are not shown, only the pin.
    yield fail(f"torch pins the ROCm Triton {pin or ''}, which the index the installer searched does not have",
               "Only the ROCm index publishes the ROCm Triton builds; PyPI's triton is the NVIDIA one.",
               evidence=quote(errs),
               fix=Fix(f"Install torch together with its {name} from {where} (`--index-url {where}`, as the only "
                       "index for these packages; with uv, pin both packages to that index), not from PyPI."))


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
    system = f.raw.get("system")
    windows = isinstance(system, dict) and system.get("os_family") == "windows"
    yield fail("the container host has no /dev/kfd to pass through",
               ("Docker here runs on Windows (Docker Desktop's Linux VM has no AMD GPU driver). " if windows else "")
               + "ROCm containers need a Linux host with the amdgpu driver loaded; check `ls -l /dev/kfd` on the host.",
               evidence=quote(errs),
               fix=Fix("Run the container on a native Linux host with amdgpu (or, on Windows, use AMD's ROCm on WSL "
                       "setup inside a supported WSL distribution instead of Docker Desktop)."))


# Signatures the checks above (and the access/platform/rocm checks) decide; the rest are reported by known-error.
CLAIMED = {"miopen-sqlite", "miopen-dir-unwritable", "apt-distro-rocm-package", "amdsmi-lib-mismatch", "amdsmi-nameerror",
           "found-no-nvidia-driver",
           "torch-not-compiled-with-cuda", *DRIVER,
           "ptxas-on-amd", "ptxas-unknown-arch", "triton-hip-lld-missing", "rccl-iommu-pt-missing",
           "ray-visible-devices-mismatch", "pip-no-matching-torch", "pip-torch-version-not-on-index",
           "docker-no-kfd-device", "installer-cpu-fallback", "torchvision-op-missing",
           *CODE_OBJECT,
           "pip-rocm-triton-not-on-index", "amdsmi-module-missing", "rocm-needs-newer-glibc",
           "kfd-open-permission-denied", "kfd-open-no-memory", "kfd-asic-not-supported", "amdgpu-get-auth-failed"}


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
    system = f.raw.get("system")
    windows = isinstance(system, dict) and system.get("os_family") == "windows"
    for sig in ids:
        s = known.by_id(sig)
        if s is None:
            continue
        hit = tuple(e for e in f.errors.value or () if sig in e.signatures)
        causes = ", ".join(c.cause for c in s.causes)
        fix = f"{s.fix_for(hit[0].text)} (source: {s.source})"
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


def _therock_targets(f: Facts) -> tuple[str, ...] | None:
    sdk = f.raw.get("rocm_sdk")
    targets = sdk.get("targets") if isinstance(sdk, dict) else None
    return tuple(str(t) for t in targets) if isinstance(targets, list) and targets else None


def _build_targets(f: Facts, errs: tuple[ErrorText, ...]) -> tuple[tuple[str, ...] | None, str]:
    therock = _therock_targets(f)
    if therock:
        return therock, "the targets `rocm-sdk targets` lists"
    for e in errs:
        listed = supported_targets(e.text)
        if listed:
            return listed, "the targets the error message lists"
    if torch_build(f) == "rocm":
        return torch_arch_list(f)
    return None, ""


def _service_fix(f: Facts, errs: tuple[ErrorText, ...], value: str) -> tuple[str, tuple[str, ...]]:
    """Where the override must be set: ollama runs as a systemd service (a shell export never reaches it); a
    container needs -e."""
    setting = f"{VAR}={value}"
    # ollama: its own gfx message, or its server log format (`level=INFO source=gpu.go:109 msg=…`)
    if any("ollama-gfx-not-supported" in e.signatures or re.search(r"\bsource=\w+\.go:\d+|\bollama\b", e.text)
           for e in errs):
        docker = (f"docker run -e {setting} --device /dev/kfd --device /dev/dri … ollama/ollama:rocm",)
        in_container = bool(f.raw.get("container_run"))
        return (("Set it in the ollama server's environment: in a container with `-e` on the run command; for the "
                 "systemd service in a drop-in (a shell `export` does not reach the server, and `ollama serve` started "
                 "by hand does not read the unit); then restart it."),
                (*(docker if in_container else ()),
                 "sudo mkdir -p /etc/systemd/system/ollama.service.d",
                 (f"printf '[Service]\\nEnvironment=\"{setting}\"\\n' | sudo tee "
                  "/etc/systemd/system/ollama.service.d/override.conf"),
                 "sudo systemctl daemon-reload && sudo systemctl restart ollama"))
    return ("Export it in the environment of the process that runs the GPU code (shell, systemd unit, container -e).",
            (f"export {setting}",))


def _rocm_in_use(errs: tuple[ErrorText, ...]) -> str | None:
    """The ROCm release whose libraries the error names by path (`/opt/rocm-6.4.0/lib/rocblas/…`)."""
    for e in errs:
        m = re.search(r"/opt/rocm-(\d+\.\d+(?:\.\d+)?)/|\\ROCm\\(\d+\.\d+(?:\.\d+)?)\\", e.text)  # Linux; Windows HIP SDK
        if m:
            return m.group(1) or m.group(2)
    return None


def _newer(a: str, b: str) -> bool:
    from packaging.version import Version

    return Version(a) > Version(b)


def _code_object_finding(f: Facts, g: Gpu, errs: tuple[ErrorText, ...]) -> Finding:
    gfx = g.gfx or ""
    arches, where = _build_targets(f, errs)
    native = native_rocm(gfx)
    py = f.python.value.version if f.python.found and f.python.value and f.python.value.version else None
    wheel = newest_wheel_for(gfx, py)
    wheel_cmd = (f"{pip(f)} install --force-reinstall torch=={wheel[0]} torchvision torchaudio --index-url "
                 f"{knowledge.index_url(wheel[1])}") if wheel and torch_build(f) == "rocm" else None
    wheel_text = f" torch {wheel[0]} from download.pytorch.org/whl/{wheel[1]} carries {gfx}." if wheel else ""
    ev = (*quote(errs), f"GPU: {g.name or '?'} ({gfx}, {g.source})")
    if arches is not None and (g.effective_gfx or gfx) in arches and not g.override:
        return warn(f"the program has code for {gfx}, yet reports no usable code object",
                    f"{where}: {', '.join(arches)}. Another visible GPU or an override may be the cause; paste "
                    "`rocminfo | grep -E 'Marketing|gfx'` and `env | grep -E 'HSA|VISIBLE'`.", evidence=ev)
    running = _rocm_in_use(errs)
    last = last_rocm(gfx) if native else None
    if native and last and running and _newer(running, last):
        # A target this ROCm dropped (gfx906 from 6.4, gfx803 long ago): the ROCm in use is newer than the last
        # release that lists it, so a newer build cannot help and no override maps it to a supported sibling.
        return fail(f"ROCm {running} no longer carries {gfx} ({g.name or 'this GPU'})",
                    f"The libraries of ROCm {running} ship no {gfx} code objects. ROCm supported {gfx} officially up "
                    f"to {last}; later releases carried it as deprecated for a while, then dropped it. An override to "
                    "another target runs another ISA's code and is not a fix.", evidence=ev,
                    fix=Fix(f"Go back to the newest ROCm that still ships {gfx} libraries (the one this GPU last "
                            f"worked with; officially ROCm {last}) and a torch built for it, or use a build compiled "
                            f"for {gfx}; remove any GFX-version override from the environment."))
    if native:
        # Natively supported by a newer ROCm (gfx1151, gfx1201, gfx950 …): an override runs another ISA's code and
        # faults; the fix is a build that carries the target (ROCm release notes; pytorch#164346).
        return fail(f"{gfx} ({g.name or 'this GPU'}) needs a ROCm {native}+ build that carries it",
                    f"The program's ROCm build has no {gfx} code objects. {gfx} is supported natively from ROCm "
                    f"{native}; an HSA_OVERRIDE_GFX_VERSION to another target is not a fix for it.{wheel_text}",
                    evidence=ev,
                    fix=Fix(f"Install a build for {gfx} (ROCm {native} or newer{'; torch: see the command' if wheel_cmd else ''})"
                            # (ByronLeeeee/Ollama-For-AMD-Installer#12: ollama for Windows listed no supported
                            # targets, "supported types:[]", while the override was set)
                            + (f" and unset {VAR} (set here to {set_to}; an override also changes which targets a "
                               "program looks for)." if (set_to := f.env_var(VAR)) else
                               " and remove any GFX-version override from the environment."),
                            (wheel_cmd,) if wheel_cmd else ()))
    system = f.raw.get("system")
    if isinstance(system, dict) and system.get("os_family") == "windows":
        # Windows (HIP SDK): no HSA runtime, so no HSA_OVERRIDE_GFX_VERSION; the libraries must carry the target.
        return fail(f"no code for {gfx} ({g.name or 'this GPU'}) in this HIP SDK / build",
                    "On Windows the libraries (HIP SDK, rocBLAS, the program's own build) must carry the GPU's target; "
                    "the Linux runtime's gfx override does not exist there.", evidence=ev,
                    fix=Fix(f"Use a HIP SDK / library build that includes {gfx}"
                            + (f" (ROCm {native} or newer)" if native else "")
                            + "; if an integrated GPU is being picked instead of the discrete one, disable it in "
                            "the firmware or select the discrete GPU with HIP_VISIBLE_DEVICES."))
    therock = _therock_targets(f)
    if therock and gfx not in therock:
        # TheRock builds every supported target in some family package, so the fix is the package for this one, not
        # another target's code under an override (rocm-facts §2.6; ROCm/TheRock#1184: gfx1103 run as gfx1100 hung).
        return fail(f"the installed ROCm packages (TheRock) are built for {', '.join(therock)}, not {gfx}",
                    f"`rocm-sdk targets` lists {', '.join(therock)}: the family package installed does not carry "
                    f"{g.name or gfx}'s {gfx} code objects.", evidence=ev,
                    fix=Fix(f"Install the packages for {gfx}: multi-arch torch with the device extra for this GPU "
                            "(or the per-family index whose family includes it), instead of an override.",
                            ((f'{pip(f)} install --force-reinstall "torch[device-{gfx}]" --index-url '
                             "https://repo.amd.com/rocm/whl-multi-arch/"),)))
    rules = [r for r in knowledge.override_rules(gfx) if arches is None or r.target in arches]
    if rules:
        rule = rules[0]
        text, cmds = _service_fix(f, errs, rule.value)
        text = f"Run {gfx} as {rule.target}: {VAR}={rule.value}. {text}" + (
            f" Better: install a build that carries {gfx} itself.{wheel_text}" if wheel else "")
        hedge = "" if arches is not None else f" (if the build carries {rule.target}, as ROCm builds usually do)"
        if arches is None:
            # The build's targets are unknown: say the value, but offer no command (fix safety: a command follows only
            # from facts that were found; the property test deletes evidence and checks that no command appears).
            cmds = ()
        return fail(f"no code for {gfx} ({g.name or 'this GPU'}); run it as {rule.target} with {VAR}={rule.value}",
                    f"{gfx} has the ISA of {rule.target}{hedge}; AMD does not support this pairing officially"
                    f"{'' if rule.verified else ' and it is a community report'}. Source: {rule.source}.{wheel_text}",
                    evidence=ev, fix=Fix(text, cmds))
    return fail(f"no code for {gfx} ({g.name or 'this GPU'}) in this build, and no same-family target to borrow",
                f"No ROCm release lists {gfx} and no supported target shares its ISA, so an override cannot help.",
                evidence=ev,
                fix=Fix(f"Use a build compiled for {gfx} (build from source with PYTORCH_ROCM_ARCH={gfx} / "
                        f"GPU_TARGETS={gfx}), or a GPU that ROCm supports.{wheel_text}", (wheel_cmd,) if wheel_cmd else ()))


@check("gpu-code-object", "errors", "No error says the program lacks code for the GPU's gfx target.",
       "hipErrorNoBinaryForGpu, 'invalid device function', 'No compatible code objects found', ollama's 'gfx… is not "
       "supported': the build has no kernels for this target.",
       "A build that carries the target; a same-ISA-family override only where one exists; never an override for "
       "targets a newer ROCm supports natively.")
def gpu_code_object(f: Facts) -> Iterable[Finding]:
    errs = code_object_errors(f.errors)
    if not errs:
        yield skip("no missing-code-object error in the evidence")
        return
    gpus = [g for g in amd_gpus(f) if g.gfx]
    if not gpus:
        yield warn("the program has no code for this GPU's target, and the GPU is not identified",
                   "Which fix applies (a newer build, a same-family override, hiding an iGPU) depends on the GPU: "
                   "paste `rocminfo | grep -E 'Marketing|gfx'` and the torch version "
                   "(`python -c 'import torch; print(torch.__version__, torch.cuda.get_arch_list())'`).",
                   evidence=quote(errs))
        return
    named = named_isas(errs)
    if len({g.gfx for g in gpus}) > 1 and any(g.integrated for g in gpus):
        # The error names the ISA it looked for: when that is a discrete GPU's, the build lacks the dGPU's own target
        # and hiding the iGPU cannot help (lamikr/rocm_sdk_builder#246: `Cannot find CO in the bundle … for ISA:
        # amdgcn-amd-amdhsa--gfx1101` beside a gfx1036 iGPU).
        dgpus = [g for g in gpus if g.integrated is False and g.gfx in named]
        if not dgpus:
            yield skip("iGPU + dGPU: see 'igpu-with-dgpu'")
            return
        gpus = dgpus
    seen: set[str] = set()
    for g in gpus:
        if g.gfx and g.gfx not in seen:
            seen.add(g.gfx)
            yield _code_object_finding(f, g, errs)


CHECKS = (miopen_user_db, nvml_bindings_error, cuda_torch_error, amdgpu_driver_error, triton_vendor_error,
          pip_no_torch_wheel, pip_torch_version_missing, pip_rocm_triton_missing, amdsmi_missing, rocm_glibc_mismatch,
          container_host_no_kfd,
          gpu_code_object, known_error)
