"""The target Python: does PyTorch publish ROCm wheels for its version?"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, needed, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.checks.platform import stack_vendor
from rocm_triton_doctor.check.checks.torch import commands, install_command, pip
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.facts.platform import accelerator, env_command, os_family
from rocm_triton_doctor.check.facts.python import torch_build, torch_index_url
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


@check("pip-replaced-rocm-torch", "python", "No later install replaced the ROCm torch with another build.",
       "An app's installer that installs the ROCm torch and then its own packages with a plain resolver swaps torch "
       "for PyPI's (a CPU build on Windows, CUDA on Linux) when one of them pins another torch (unsloth#7275: "
       "torch 2.11.0+rocm7.13.0 out, 2.10.0 in).",
       "Reinstall the ROCm torch from its index, and install the app's packages with torch pinned (a constraints file) "
       "or with --no-deps.")
def pip_replaced_rocm_torch(f: Facts) -> Iterable[Finding]:
    env = f.python.value if f.python.found else None
    swap = env.torch_replaced if env else None
    if env is None or swap is None:
        yield skip("no install in the evidence that replaced torch")
        return
    old, new = swap
    if "+rocm" not in old or "+rocm" in new:
        yield skip(f"an install replaced torch {old} with {new}; not a ROCm torch replaced by another build")
        return
    # The index to reinstall from: one the text names, else the PyTorch index of the removed torch's own tag. Either is
    # where the removed ROCm torch came from (a fact shown), never derived from a guess about the GPU.
    tagged = torch_index_url(old)
    known = tagged if tagged and tagged.rsplit("/", 1)[-1] in knowledge.rocm_indexes() else None  # TheRock tags are not
    index = env.rocm_indexes_named[0] if len(env.rocm_indexes_named) == 1 else known
    cmd = f"{pip(f)} install --force-reinstall torch=={old} --index-url {index}" if index else None
    # A ROCm index as a command only where an AMD GPU is shown (fixsafety); otherwise the same command in words.
    said = f" (`{cmd}`)" if cmd and accelerator(f) != "amd" else ""
    yield fail(f"an install replaced the ROCm torch {old} with {new}",
               f"torch {new} carries no +rocm tag: it is PyPI's build (CPU-only on Windows, CUDA on Linux), so torch "
               "no longer uses the AMD GPU; the package whose requirements pulled it will pull it again.",
               evidence=("install log",),
               fix=Fix(f"Put the ROCm torch back{' from ' + index if index else ''}{said} (torchvision and torchaudio from "
                       "the same index, at the versions that match it), then install the app's other packages without "
                       f"letting them move torch: a constraints file pinning torch=={old} (`PIP_CONSTRAINT`, "
                       "`uv pip install -c`) or `--no-deps`.", commands(cmd) if not said else ()))


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
    libs = _sdk_library_targets(f)
    other = [t for t in libs if gfx and not any(_covers(t, g) for g in gfx)]
    if other:
        # The index's install pulls ROCm libraries built for another target than the GPU (TheRock#3046: the gfx1150
        # index's torch pulled rocm-sdk-libraries-gfx1151 onto an 890M): their kernels are not this GPU's.
        yield fail(f"the install from TheRock's {family} index pulls ROCm libraries for {', '.join(other)}, not this "
                   f"GPU's {', '.join(gfx)}",
                   f"{urls[0]} was frozen when TheRock moved to multi-arch releases (PR #5790, June 2026); the libraries "
                   f"it resolves carry device code for {', '.join(other)} only.", evidence=("pip install command",),
                   fix=Fix(f"Install from the multi-arch index instead, {MULTI_ARCH_NIGHTLY} (nightly) or "
                           f"{MULTI_ARCH_STABLE} (stable), choosing the device code with {extra}."),
                   links=("https://github.com/ROCm/TheRock/pull/5790", "https://github.com/ROCm/TheRock/issues/3046"))
        return
    yield (fail if empty else warn)(
               f"TheRock's per-family index for {family} " + ("has nothing to install" if empty
                                                              else "no longer gets builds (torch came from it)"),
               f"{urls[0]} was frozen when TheRock moved to multi-arch releases (PR #5790, June 2026).",
               evidence=("pip install command",),
               fix=Fix(f"Install from the multi-arch index instead, {MULTI_ARCH_NIGHTLY} (nightly) or "
                       f"{MULTI_ARCH_STABLE} (stable), choosing the device code with {extra}"
                       + ("." if gfx else " (rocminfo | grep gfx names it).")),
               links=("https://github.com/ROCm/TheRock/pull/5790", "https://github.com/ROCm/TheRock/issues/5954"))


def _sdk_library_targets(f: Facts) -> list[str]:
    py = f.raw.get("python")
    targets = py.get("sdk_library_targets") if isinstance(py, dict) else None
    return [str(t) for t in targets] if isinstance(targets, list) else []


def _covers(target: str, gfx: str) -> bool:
    """Whether TheRock's library target (gfx1151, or a family such as gfx110X-all / gfx94X-dcgpu) carries gfx."""
    head = target.split("-")[0].lower()
    if "x" not in head[3:]:
        return head == gfx
    prefix = head[:head.index("x", 3)]
    return gfx.startswith(prefix) and len(gfx) == len(head)


def _venv_install(f: Facts) -> tuple[str, ...]:
    """The torch install for the new Python 3.12 venv, run by that venv's own interpreter."""
    cmd = install_command(f)
    if cmd is None:
        return ()
    return ("~/rocm-env/bin/python -m pip" + cmd.split(" -m pip", 1)[1] if " -m pip" in cmd
            else "~/rocm-env/bin/python -m " + cmd,)


# A user site-packages: Windows `%APPDATA%\Python\Python312\site-packages`, Linux/macOS
# `~/.local/lib/python3.12/site-packages` (site.USER_SITE). Python puts it before its own site-packages, except in a
# venv (which leaves it out by default) or with PYTHONNOUSERSITE set.
_USER_SITE = re.compile(r"[\\/]AppData[\\/]Roaming[\\/]Python[\\/]Python\d+[\\/]site-packages|/\.local/lib/python3\.\d+/"
                        r"site-packages", re.I)


@check("python-user-site-torch", "python", "torch is not taken from the user's site-packages ahead of the program's own "
       "environment.",
       "A torch installed with `pip install --user` (or by another app into the user site) shadows the torch of any "
       "interpreter that reads the user site, such as an app's embedded Python (patientx-cfz/comfyui-rocm#125: a CPU "
       "torch 2.4.1 from AppData\\Roaming\\Python\\Python312 in front of the app's ROCm packages).",
       "Run the app with PYTHONNOUSERSITE=1, or remove torch from the user site.")
def python_user_site_torch(f: Facts) -> Iterable[Finding]:
    env = f.python.value if f.python.found else None
    dists = env.distributions if env else {}
    user = {n: d for n, d in dists.items() if n in ("torch", "torchvision", "torchaudio") and d.location
            and _USER_SITE.search(d.location)}
    other = {d.location for n, d in dists.items() if d.location and not _USER_SITE.search(d.location)}
    if not user:
        yield skip("no torch package seen in a user site-packages")
        return
    if not other:
        yield skip("torch is in the user site-packages, and no other environment is shown",
                   "Whether the program's interpreter has its own torch is not in the evidence.")
        return
    name, d = next(iter(user.items()))
    cmd = env_command(f, "PYTHONNOUSERSITE", "1")
    yield fail(f"{name} {d.version} comes from the user site-packages ({d.location}), ahead of the program's own "
               "environment",
               f"The program's interpreter also reads {', '.join(sorted(other))}; the user site comes first, so its "
               f"{', '.join(sorted(user))} {'is' if len(user) == 1 else 'are'} the one(s) imported.",
               evidence=("pip install log",),
               fix=Fix("Start the program with PYTHONNOUSERSITE=1 (in its launcher), or remove the packages from the "
                       f"user site ({', '.join(sorted(user))} under {d.location}); then check that torch.__version__ "
                       "is the environment's build.", (cmd,) if cmd else ()))


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
    windows = os_family(f) == "windows"
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


@check("pip-no-torch-wheel", "python", "pip found a torch wheel on the index it was given.",
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

@check("pip-torch-version-missing", "python", "The pinned torch version exists on the index pip was given.",
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

@check("pip-rocm-triton-missing", "python", "pip found the ROCm Triton that torch pins.",
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


# vLLM's ROCm wheels (wheels.vllm.ai/rocm/…) are built for one Python: "Python 3.12 required for ROCm wheels"
# (vllm-project/vllm docs/getting_started/installation/gpu.rocm.inc.md, every variant rocm700 … rocm100).
VLLM_ROCM_INDEX = re.compile(r"wheels\.vllm\.ai/rocm", re.I)
VLLM_ROCM_PYTHON = "3.12"


@check("vllm-rocm-wheel-python", "python", "vLLM's ROCm wheels were installed into the Python they are built for.",
       "vLLM publishes its ROCm wheels for Python 3.12 only. pip merges an --extra-index-url with PyPI, so on another "
       "Python it silently installs PyPI's vLLM (a CUDA build, with PyPI's torch), which finds no GPU on an AMD "
       "machine ('Failed to infer device type').",
       "Install vLLM from its ROCm index into a Python 3.12 environment, or use vLLM's ROCm container image.")
def vllm_rocm_wheel_python(f: Facts) -> Iterable[Finding]:
    env = f.python.value if f.python.found else None
    urls = [u for u in (env.install_indexes + env.pip_indexes if env else ()) if VLLM_ROCM_INDEX.search(u)]
    if not urls:
        yield skip("no install from vLLM's ROCm index in the evidence")
        return
    py = env.version if env else None
    if not py:
        yield skip(f"vLLM's ROCm index ({urls[0]}) was used; the Python's version is unknown",
                   "Paste `python --version` from the environment vLLM was installed into.")
        return
    if py == VLLM_ROCM_PYTHON:
        yield ok(f"vLLM's ROCm index used with Python {py}, the Python its wheels are built for")
        return
    yield fail(f"vLLM's ROCm wheels need Python {VLLM_ROCM_PYTHON}; this install ran on Python {py}",
               f"{urls[0]} has no wheel for Python {py}, so pip took PyPI's vLLM instead: a CUDA build with PyPI's "
               "torch, which cannot use an AMD GPU (vLLM then fails with 'Failed to infer device type').",
               evidence=("python", *urls[:1]),
               fix=Fix(f"Create a Python {VLLM_ROCM_PYTHON} environment and install vLLM there from the same index "
                       "(vLLM's docs: Python 3.12 required for ROCm wheels), or run vLLM's ROCm container image.",
                       (f"uv venv --python {VLLM_ROCM_PYTHON} --seed ~/vllm-rocm",
                        f"source ~/vllm-rocm/bin/activate && uv pip install vllm --extra-index-url {urls[0]}")),
               links=("https://docs.vllm.ai/en/latest/getting_started/installation/gpu/",))


CHECKS = (python_version_wheels, pip_index_order, pip_pulls_pypi_torch, pip_kept_non_rocm_torch,
          pip_replaced_rocm_torch,
          pip_retired_index, installer_cpu_fallback, pip_no_torch_wheel, pip_torch_version_missing,
          pip_rocm_triton_missing, python_user_site_torch, vllm_rocm_wheel_python)
