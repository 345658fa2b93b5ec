"""The target Python: does PyTorch publish ROCm wheels for its version?"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, needed, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.checks.platform import stack_vendor
from rocm_triton_doctor.check.checks.torch import install_command, pip
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.facts.platform import accelerator
from rocm_triton_doctor.check.facts.python import torch_build
from rocm_triton_doctor.check.findings import Finding, Fix


@check("python-version-wheels", "python", "PyTorch publishes ROCm wheels for this Python version.",
       "pip falls back to an old or CPU-only torch, or finds none ('from versions: none'), when the Python is too "
       "new or too old for the ROCm index.",
       "Create a virtual environment with a supported Python (uv venv --python 3.12, or pyenv).", needs=("python",),
       ok_is_evidence=False)
def python_version_wheels(f: Facts) -> Iterable[Finding]:
    py = needed(f.python).version
    plat = accelerator(f)
    if plat == "unknown" and needed(f.python).wants_rocm:
        plat = "amd"  # pip was asked for ROCm wheels: judge the Python against the ROCm indexes
    if with_signature(f.errors, "pip-no-matching-torch"):
        yield skip("pip's own answer decides it: see 'pip-no-torch-wheel'")
        return
    if not py:
        yield skip("Python version unknown", "Paste `python --version` (the Python that runs torch).")
        return
    rels = [r for r in knowledge.torch_releases() if r.rocm_indexes]
    ok_rels = [r for r in rels if r.supports_python(py)]
    newest = max(rels, key=lambda r: Version(r.torch))
    if plat != "amd":
        if plat == "unknown":
            yield skip(f"Python {py}; whether this machine needs ROCm wheels is unknown")
        else:
            yield ok(f"Python {py}")
        return
    if torch_build(f) == "rocm" and not (ok_rels and max(ok_rels, key=lambda r: Version(r.torch)).torch == newest.torch):
        # A ROCm torch is already installed in this Python: the version only limits future upgrades.
        best_v = max(ok_rels, key=lambda r: Version(r.torch)).torch if ok_rels else None
        yield info(f"Python {py}" + (f" limits future upgrades to torch {best_v} on ROCm" if best_v else
                                     " has no ROCm wheel on download.pytorch.org today (a ROCm torch is installed)"))
        return
    if not ok_rels:
        lo = min(rels, key=lambda r: Version(r.torch))
        # Whether torch is missing is unknown: the Python cannot get a ROCm wheel, but nothing shows one is needed.
        yield (warn if torch_build(f) == "unknown" else fail)(f"no ROCm torch wheel for Python {py}",
                   f"ROCm wheels known to the doctor need Python {newest.requires_python} (torch {newest.torch}) … "
                   f"{lo.requires_python} (torch {lo.torch}).",
                   evidence=("python",),
                   fix=Fix("Use a virtual environment with a supported Python (3.12), and install torch into it.",
                           ("python3.12 -m venv ~/rocm-env", *_venv_install(f)) if torch_build(f) != "unknown" else ()))
        return
    best = max(ok_rels, key=lambda r: Version(r.torch))
    if best.torch != newest.torch:
        yield warn(f"Python {py} limits you to torch {best.torch} on ROCm",
                   f"The newest ROCm wheels (torch {newest.torch}) need Python {newest.requires_python}.",
                   fix=Fix("Use Python 3.12 in a virtual environment for the newest wheels."))
        return
    yield ok(f"Python {py} has ROCm wheels up to torch {best.torch}")


@check("pip-index-order", "python", "pip takes torch from the ROCm index, not from PyPI.",
       "With the ROCm index given only as an extra index, pip picks the highest version from any index: PyPI's torch "
       "(the CUDA build on Linux) wins whenever it is newer than the ROCm index's (ComfyUI-Installer#15).",
       "Give the ROCm index as the only index (--index-url) for torch, torchvision and torchaudio.", needs=("python",))
def pip_index_order(f: Facts) -> Iterable[Finding]:
    env = needed(f.python)
    rocm = [u for u in env.pip_indexes if "rocm" in u or "radeon" in u]
    pypi = [u for u in env.pip_indexes if "pypi.org" in u or "pypi.python.org" in u]
    torch = env.downloaded("torch")
    if not env.pip_indexes or not torch:
        yield skip("no pip install log for torch in the evidence")
        return
    if not (rocm and pypi):
        yield skip(f"pip searched {', '.join(env.pip_indexes)} only")
        return
    if "+rocm" in torch:
        yield skip(f"pip chose torch {torch} from the ROCm index")
        return
    yield fail(f"pip took torch {torch} from PyPI although a ROCm index ({rocm[0]}) was given",
               "Given beside PyPI, the ROCm index is only one more place to look: pip installs the highest version it "
               "finds, and PyPI's Linux torch (a CUDA build) is usually newer than the ROCm index's.",
               evidence=("pip install log",),
               fix=Fix("Install torch, torchvision and torchaudio with the ROCm index as the only index (other "
                       "packages can come from PyPI in a separate command).",
                       (f"{pip(f)} install --force-reinstall torch torchvision torchaudio --index-url {rocm[0]}",)),
               links=("https://pytorch.org/get-started/locally/",))


@check("pip-pulls-pypi-torch", "python", "pip does not replace a ROCm torch with PyPI's as another package's dependency.",
       "`pip install torchaudio` (or any package requiring torch) with PyPI alone resolves torch from PyPI, a CUDA "
       "build on Linux, and replaces the ROCm torch already installed (ROCm/pytorch#1533: torchaudio in a "
       "rocm/pytorch image).", "Install that package from torch's ROCm index, matched to torch, or with --no-deps.")
def pip_pulls_pypi_torch(f: Facts) -> Iterable[Finding]:
    env = f.python.value if f.python.found else None
    by = env.pip_pulled_by.get("torch") if env else None
    wheel = next((w.rsplit("/", 1)[-1] for w in (env.pip_downloads if env else ())
                  if w.rsplit("/", 1)[-1].lower().startswith("torch-")), None)
    if env is None or by is None or wheel is None:
        yield skip("no pip log resolving torch as another package's dependency")
        return
    version = wheel.split("-")[1]
    if "+rocm" in version or stack_vendor(f) != "amd":  # a rocm/* image or a ROCm torch shows the stack is ROCm
        yield skip(f"pip resolved torch {version} for {by}; not a non-ROCm torch on an AMD machine")
        return
    yield fail(f"pip is installing PyPI's torch {version} because {by} requires it, replacing the ROCm torch",
               f"{wheel} is PyPI's build (CUDA on Linux); once installed, torch no longer uses the AMD GPU.",
               evidence=("pip install log",),
               fix=Fix(f"Stop that install. Install {by} from the ROCm index the installed torch came from "
                       "(download.pytorch.org/whl/rocmX.Y as the only index), at the version that matches torch, or "
                       f"with --no-deps; then check that torch.__version__ still carries +rocm."),
               links=("https://pytorch.org/get-started/previous-versions/",))


@check("pip-kept-non-rocm-torch", "python", "A ROCm install command did not keep a non-ROCm torch.",
       "Given a torch that is already installed, pip answers 'Requirement already satisfied' and never looks at the "
       "ROCm index: a CUDA or CPU torch from PyPI (no +rocm in its version) stays, and so does its CUDA stack.",
       "Uninstall torch, torchvision and torchaudio, then install them from the ROCm index alone.")
def pip_kept_non_rocm_torch(f: Facts) -> Iterable[Finding]:
    env = f.python.value if f.python.found else None
    kept = env.pip_kept.get("torch") if env else None
    if env is None or kept is None:
        yield skip("no 'Requirement already satisfied: torch' in a pip log")
        return
    rocm = env.rocm_indexes
    if not rocm:
        yield skip(f"pip kept torch {kept}; it was not asked for a ROCm index")
        return
    if "rocm" in kept.lower():
        yield ok(f"pip kept torch {kept}, a ROCm build")
        return
    # The user's own command names the ROCm index, so this machine is meant to run ROCm: reinstalling from that
    # index is what they asked for. Other packages pip kept (torchvision, torchaudio) must go too, or they pull
    # the PyPI torch back.
    yield fail(f"pip kept torch {kept}, which is not a ROCm build, instead of installing from {rocm[0]}",
               f"'Requirement already satisfied' means pip did not look at {rocm[0]}: the torch already in this "
               "environment (a PyPI build: CUDA on Linux, or CPU) stays, and ROCm is never used.",
               evidence=("pip install log",),
               fix=Fix("Remove the non-ROCm torch and its companions, then install from the ROCm index alone.",
                       (f"{pip(f)} uninstall -y torch torchvision torchaudio",
                        f"{pip(f)} install torch torchvision torchaudio --index-url {rocm[0]}")),
               links=("https://pytorch.org/get-started/locally/",))


# TheRock's per-family nightly indexes (rocm.nightlies.amd.com/v2/<family>/, e.g. gfx110X-all, gfx1151) stopped
# receiving builds when the per-family release workflows were deleted (ROCm/TheRock PR #5790, 2026-06-11; maintainer
# in TheRock#5954): the multi-arch index replaces them, device code chosen with the torch[device-gfxN] extra
# (rocm-facts.md, TheRock multi-arch wheels).
RETIRED_FAMILY_INDEX = re.compile(r"rocm\.nightlies\.amd\.com/v2(?:-staging)?/(?P<family>gfx[\w-]+)")
MULTI_ARCH_NIGHTLY = "https://rocm.nightlies.amd.com/whl-multi-arch/"
MULTI_ARCH_STABLE = "https://repo.amd.com/rocm/whl-multi-arch/"


@check("pip-retired-index", "python", "torch is not installed from a TheRock index that no longer gets builds.",
       "TheRock's per-family nightly indexes (rocm.nightlies.amd.com/v2/<family>/) were frozen when the per-family "
       "release workflows were deleted (TheRock PR #5790, June 2026): an install from them gets months-old builds.",
       "Install from the multi-arch index with the torch[device-gfxN] extra for the GPU's target.")
def pip_retired_index(f: Facts) -> Iterable[Finding]:
    env = f.python.value if f.python.found else None
    urls = [u for u in (env.install_indexes + env.pip_indexes if env else ()) if RETIRED_FAMILY_INDEX.search(u)]
    if not urls:
        yield skip("no TheRock per-family index in a pasted install command or pip log")
        return
    family = RETIRED_FAMILY_INDEX.search(urls[0]).group("family")  # type: ignore[union-attr]
    rt = f.runtime.value if f.runtime.found else None
    if rt is not None and rt.is_available and torch_build(f) == "rocm":
        # Working now (legacy-rocm-build#4846, installed while the index was live): nothing to fix today; updates
        # from that index will not come.
        yield info(f"torch came from TheRock's per-family index for {family}, which no longer gets builds; it works",
                   f"For newer builds use the multi-arch index ({MULTI_ARCH_NIGHTLY}) with torch[device-gfxNNNN].")
        return
    gfx = sorted({g.gfx for g in amd_gpus(f) if g.gfx})
    # Words, not a command: whether this torch works is what decides between 'move' and 'leave it' (info above), and
    # a command that appeared when that evidence is missing would add a fix on less evidence.
    extra = (", ".join(f"torch[device-{g}]" for g in gfx) if gfx
             else f"torch[device-gfxNNNN] for the GPU's target (its family: {family})")
    # pip found nothing at all there (`rocm[devel,libraries] (from versions: none)`, comfyui-rocm#59): the install
    # failed outright, not merely froze.
    empty = bool(with_signature(f.errors, "pip-index-has-nothing"))
    yield (fail if empty else warn)(
               f"TheRock's per-family index for {family} " + ("has nothing to install" if empty
                                                              else "no longer gets builds (torch came from it)"),
               f"{urls[0]} was frozen when TheRock moved to multi-arch releases (PR #5790, June 2026).",
               evidence=("pip install command",),
               fix=Fix(f"Install from the multi-arch index instead, {MULTI_ARCH_NIGHTLY} (nightly) or "
                       f"{MULTI_ARCH_STABLE} (stable), choosing the device code with {extra}"
                       + ("." if gfx else " (rocminfo | grep gfx names it).")),
               links=("https://github.com/ROCm/TheRock/pull/5790", "https://github.com/ROCm/TheRock/issues/5954"))


def _venv_install(f: Facts) -> tuple[str, ...]:
    """The torch install for the new Python 3.12 venv, run by that venv's own interpreter."""
    cmd = install_command(f)
    if cmd is None:
        return ()
    return ("~/rocm-env/bin/python -m pip" + cmd.split(" -m pip", 1)[1] if " -m pip" in cmd
            else "~/rocm-env/bin/python -m " + cmd,)


@check("installer-cpu-fallback", "python", "An app's installer did not fall back to a CPU-only torch.",
       "Installers that look for ROCm (Linux) or the HIP SDK (Windows) to pick a GPU torch install a CPU torch when "
       "they find none ('falling back to CPU-only PyTorch', unsloth#8731; 'ROCm: version=None … Using CPU-only "
       "torch', Stable-Diffusion-Info#45): the app then runs on the CPU.",
       "Install ROCm or the HIP SDK (or point the installer at it), then rerun the installer.")
def installer_cpu_fallback(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "installer-cpu-fallback")
    if not errs:
        yield skip("no installer log falling back to a CPU torch")
        return
    system = f.raw.get("system")
    windows = isinstance(system, dict) and system.get("os_family") == "windows"
    # Words, not commands: which ROCm or HIP SDK release suits the GPU is decided by the GPU checks; a CPU or ROCm
    # index named here without them could be the wrong one (fix safety).
    yield fail("the installer found no " + ("HIP SDK" if windows else "ROCm") + " and installed a CPU-only torch",
               "The app will run on the CPU: its installer picks the GPU torch only when it finds "
               + ("AMD's HIP SDK (HIP_PATH)." if windows else "a ROCm install (/opt/rocm, ROCM_PATH)."),
               evidence=quote(errs),
               fix=Fix("Install AMD's HIP SDK in a version that supports this GPU, check that HIP_PATH points at it, "
                       "then let the installer recreate its venv." if windows else
                       "Install ROCm for this GPU (or, if it is installed, point the installer at it with ROCM_PATH), "
                       "then rerun the installer so it picks a ROCm torch; `rocm-triton-doctor check` on the machine "
                       "names the release the GPU needs."))


CHECKS = (python_version_wheels, pip_index_order, pip_pulls_pypi_torch, pip_kept_non_rocm_torch,
          pip_retired_index, installer_cpu_fallback)
