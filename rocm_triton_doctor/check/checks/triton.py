"""Triton: exactly one distribution, the version torch pins, an active backend for this GPU, and a toolchain."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, needed, ok, skip, warn
from rocm_triton_doctor.check.checks.gpus import amd_gpus
from rocm_triton_doctor.check.checks.gpus import pip as env_pip
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.facts.platform import accelerator, amd_host, env_command
from rocm_triton_doctor.check.facts.python import torch_build, torch_index_url
from rocm_triton_doctor.check.findings import Finding, Fix

TRITON_DISTS = {"triton", "pytorch-triton-rocm", "triton-rocm", "pytorch-triton", "triton-nightly"}


def _installed(f: Facts) -> dict[str, str]:
    if not f.python.found or not f.python.value:
        return {}
    return {n: d.version for n, d in f.python.value.distributions.items() if n in TRITON_DISTS}


def _torch_pin(f: Facts) -> tuple[str, str] | None:
    """(distribution, specifier) that the installed torch requires, from its own metadata."""
    if not f.python.found or not f.python.value:
        return None
    torch = f.python.value.dist("torch")
    return torch.pinned(TRITON_DISTS) if torch else None


def _pip(f: Facts) -> str:
    from rocm_triton_doctor.check.checks.torch import pip

    return pip(f)


def _reinstall(f: Facts) -> str | None:
    torch = f.python.value.dist("torch") if f.python.found and f.python.value else None
    index = torch_index_url(torch.version) if torch else None
    if index:
        pin = _torch_pin(f)
        target = f"{pin[0]}{pin[1]}" if pin else "pytorch-triton-rocm"
        return f"{_pip(f)} install --force-reinstall --no-deps '{target}' --index-url {index}"
    from rocm_triton_doctor.check.checks.torch import install_command

    return install_command(f)


def _cmds(*cmds: str | None) -> tuple[str, ...]:
    return tuple(c for c in cmds if c)


@check("triton-missing", "triton", "A Triton distribution is installed next to a GPU build of torch.",
       "torch.compile and every Triton kernel need it; torch's ROCm wheels depend on the ROCm Triton.",
       "Install the Triton that torch pins, from torch's index.", needs=("python",), ok_is_evidence=False)
def triton_missing(f: Facts) -> Iterable[Finding]:
    inst = _installed(f)
    if inst:
        yield ok("Triton installed: " + ", ".join(f"{n} {v}" for n, v in sorted(inst.items())))
        return
    if not needed(f.python).distributions_complete:
        yield skip("whether Triton is installed is unknown", "Paste `python -m pip list` (unfiltered).")
        return
    b = torch_build(f)
    if b in ("rocm", "cuda"):
        pin = _torch_pin(f)
        yield fail("Triton is not installed", f"torch requires {pin[0]}{pin[1]}." if pin else "",
                   fix=Fix("Install the one torch pins, from torch's own index.", _cmds(_reinstall(f))))
    elif b == "cpu":  # issue #18 defect 1: smoke's interpreter path needs Triton too; "✓" sent users in a circle
        yield warn("Triton is not installed: `smoke` cannot run (its CPU interpreter path needs Triton)",
                   "The CPU build of torch does not pull Triton in; PyPI's triton runs kernels in interpreter mode.",
                   fix=Fix("Install it into the same environment:", (f"{env_pip(f)} install triton",)))
    else:
        yield (warn if accelerator(f) == "amd" else ok)(
            "Triton is not installed", "Triton kernels need it; a GPU build of torch installs the matching one.")


@check("triton-duplicate-dists", "triton", "Exactly one installed distribution owns the triton/ package.",
       "Two distributions (e.g. pytorch-triton-rocm and PyPI triton, pulled in by another package) overwrite each "
       "other's files in site-packages/triton; the last one installed wins, often the CUDA-only one "
       "(state-spaces/mamba#595).",
       "Uninstall all of them, then reinstall the one torch pins.", needs=("python",), ok_is_evidence=False)
def triton_duplicate_dists(f: Facts) -> Iterable[Finding]:
    owners = needed(f.python).triton_owners
    inst = _installed(f)
    fetched = {n: v for n in sorted(TRITON_DISTS) if n not in inst and (v := needed(f.python).downloaded(n))}
    if inst and fetched:
        # pip's log shows a second Triton wheel being pulled in by another package (state-spaces/mamba#595).
        names = sorted(fetched)
        keep = next(iter(sorted(inst)))
        yield warn(f"pip is installing {', '.join(f'{n} {v}' for n, v in fetched.items())} beside the installed "
                   f"{', '.join(f'{n} {v}' for n, v in inst.items())}",
                   "Both distributions own the triton/ package: whichever is installed last overwrites the other's "
                   "files, often leaving PyPI's CUDA-oriented triton in place of the ROCm one.",
                   evidence=("pip install log",),
                   fix=Fix(f"After installing, remove the extra distribution and reinstall {keep} (torch's pin).",
                           _cmds(f"{_pip(f)} uninstall -y {' '.join(names)}", _reinstall(f))),
                   links=("https://github.com/state-spaces/mamba/issues/595",))
        return
    if not owners and not inst:
        if needed(f.python).distributions_complete:
            yield ok("no Triton distribution installed")
        else:
            yield skip("installed Triton distributions unknown", "Paste `python -m pip list` (unfiltered).")
        return
    if len(owners) <= 1 and len(inst) <= 1:
        yield ok(f"one Triton distribution ({owners[0] if owners else next(iter(inst), 'none')})")
        return
    names = sorted(set(owners) | set(inst))
    desc = ", ".join(f"{n} {inst.get(n, '?')}" for n in names)
    yield fail(f"{len(names)} Triton distributions installed: {desc}",
               "They share the triton/ directory: whichever was installed last decides what `import triton` "
               "loads, and uninstalling one breaks the other.",
               evidence=("python: distributions owning triton/__init__.py",),
               fix=Fix("Remove them all, then reinstall only the one torch pins.",
                       _cmds(f"{_pip(f)} uninstall -y {' '.join(names)}", _reinstall(f))),
               links=("https://github.com/state-spaces/mamba/issues/595",))


@check("triton-version-pin", "triton", "The installed Triton is the distribution and version torch pins.",
       "torch is tested with one exact Triton; another version breaks torch.compile with import or codegen errors "
       "(another package's triton requirement is the usual cause).",
       "Reinstall the pinned Triton from torch's index.", needs=("python",))
def triton_version_pin(f: Facts) -> Iterable[Finding]:
    pin = _torch_pin(f)
    inst = _installed(f)
    if pin is None:
        yield skip("torch declares no Triton requirement here")
        return
    name, spec = pin
    if name not in inst:
        if inst:
            other = ", ".join(f"{n} {v}" for n, v in inst.items())
            yield fail(f"torch requires {name}{spec} but {other} is installed",
                       "A Triton from another source (usually PyPI's CUDA-oriented `triton`) replaced the one built "
                       "for this torch.", fix=Fix("Swap it for the pinned one.",
                                                  _cmds(f"{_pip(f)} uninstall -y {' '.join(inst)}", _reinstall(f))))
        else:
            yield skip("Triton missing (see 'triton-missing')")
        return
    try:
        good = Version(inst[name]) in SpecifierSet(spec) if spec else True
    except (InvalidSpecifier, InvalidVersion):
        good = False
    if good:
        yield ok(f"{name} {inst[name]} satisfies torch's pin {spec or '(any)'}")
    else:
        yield fail(f"{name} {inst[name]} does not satisfy torch's pin {name}{spec}",
                   "torch.compile and Triton kernels can break in import or code generation.",
                   fix=Fix(f"Reinstall the pinned version ({name}{spec}) from the index torch came from.",
                           _cmds(_reinstall(f))))


@check("triton-backend", "triton", "Triton's active backend is HIP (AMD) or CUDA (NVIDIA) and targets the GPU's arch.",
       "'0 active drivers' means Triton found no usable GPU backend (a CPU/CUDA torch on AMD, or no GPU access).",
       "Fix torch first; then Triton picks the backend from torch.", needs=("runtime",))
def triton_backend(f: Facts) -> Iterable[Finding]:
    r = needed(f.runtime)
    plat = accelerator(f)
    if plat == "cpu":
        yield skip("no GPU: Triton runs only in interpreter mode (TRITON_INTERPRET=1) here")
        return
    if not r.is_available:
        yield skip("torch sees no GPU (see 'torch-sees-gpu')")
        return
    if r.triton_error:
        yield fail("Triton cannot start its GPU backend", r.triton_error, evidence=("runtime probe",),
                   fix=Fix("Check the Triton findings above (duplicates, pin); the error is quoted verbatim."))
        return
    want = {"amd": "hip", "nvidia": "cuda"}.get(plat)
    if want and r.triton_backend != want:
        if r.triton_backend is None:
            yield skip("Triton's backend unknown", "Paste `python -c 'import triton; print(triton.runtime.driver.active"
                       ".get_current_target())'`." if r.triton_version is None else "The runtime probe did not record it.")
            return
        yield fail(f"Triton's active backend is {r.triton_backend!r}, expected {want!r}",
                   fix=Fix("Reinstall the Triton that torch pins.", _cmds(_reinstall(f))))
        return
    if not r.triton_backend or not r.triton_arch:
        yield skip("Triton's backend and target unknown")
        return
    expect = {g.effective_gfx for g in amd_gpus(f)} if plat == "amd" else set()
    arch = knowledge.base_gfx(r.triton_arch) if plat == "amd" else r.triton_arch
    if expect and arch not in expect:
        yield warn(f"Triton targets {r.triton_arch}, but the GPU(s) are {', '.join(sorted(e for e in expect if e))}",
                   "Triton compiles for device 0; check device visibility and overrides.")
        return
    yield ok(f"Triton {r.triton_version} backend {r.triton_backend}, target {r.triton_arch}")


@check("triton-build-toolchain", "triton", "A C compiler and Python.h are present (Triton builds its GPU driver stub on "
       "first use).", "Without them the first Triton kernel fails: 'fatal error: Python.h: No such file or directory'.",
       "Install gcc and the Python development headers.", ok_is_evidence=False)
def triton_build_toolchain(f: Facts) -> Iterable[Finding]:
    which = f.which.value if f.which.found and f.which.value else None
    if which is None or not f.python.found or not f.python.value:
        yield skip("toolchain not probed")
        return
    names = ("cc", "gcc", "clang")
    cc = f.env_var("CC") or next((which[k] for k in names if which.get(k)), None)
    if not cc and not all(k in which for k in names):  # a name missing from `which` is unknown, not absent
        yield skip("whether a C compiler is installed is unknown")
        return
    has_h = f.python.value.python_h
    if has_h is None:
        yield skip("whether Python.h is installed is unknown")
        return
    if cc and has_h:
        yield ok(f"C compiler ({cc}) and Python.h present")
        return
    missing = [w for w, present in (("a C compiler", bool(cc)), ("Python.h", bool(has_h))) if not present]
    plat = accelerator(f)
    sev = fail if plat in ("amd", "nvidia") else warn
    v = ".".join(f.python.value.version.split(".")[:2])
    yield sev(f"missing {' and '.join(missing)}: Triton cannot build its driver stub",
              f"Python.h is looked for in {f.python.value.include_dir or '?'}.",
              fix=Fix("Install the compiler and headers (Debian/Ubuntu shown; Fedora/RHEL: gcc python3-devel).",
                      (f"sudo apt-get install -y gcc python{v}-dev",), needs_sudo=True))


@check("triton-hip-linker", "triton", "Triton's AMD backend finds ROCm's ld.lld.",
       "Triton links every AMD kernel with ROCm's ld.lld, looked for under /opt/rocm/llvm/bin unless TRITON_HIP_LLD_PATH "
       "says where; a torch that carries its ROCm in the wheel (TheRock) has no /opt/rocm, so torch.compile fails "
       "('ROCm linker /opt/rocm/llvm/bin/ld.lld not found', ROCm/ROCm#4499; TheRock#2006).",
       "Set TRITON_HIP_LLD_PATH to an ld.lld (the pip ROCm's: $(rocm-sdk path --root)/llvm/bin/ld.lld).")
def triton_hip_linker(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "triton-hip-lld-missing")
    if not errs:
        yield skip("no Triton 'ROCm linker … not found' error in the evidence")
        return
    set_to = f.env_var("TRITON_HIP_LLD_PATH")
    yield fail("Triton cannot find ROCm's linker (ld.lld), so no Triton kernel builds",
               "Triton's AMD backend looked for /opt/rocm/llvm/bin/ld.lld"
               + (f"; TRITON_HIP_LLD_PATH is set to {set_to}, which has none." if set_to else
                  " and TRITON_HIP_LLD_PATH is not set."),
               evidence=quote(errs),
               fix=Fix("Point Triton at an ld.lld: with TheRock's pip-installed ROCm, export "
                       "TRITON_HIP_LLD_PATH=$(rocm-sdk path --root)/llvm/bin/ld.lld; with a system ROCm elsewhere, "
                       "<its root>/llvm/bin/ld.lld."))


@check("triton-override-arch", "triton", "TRITON_OVERRIDE_ARCH, where it is set, names the target the GPU runs as.",
       "Triton's AMD backend compiles for TRITON_OVERRIDE_ARCH instead of the device's own target (triton/knobs.py "
       "runtime.override_arch, backends/amd/compiler.py): another gfx gives code the GPU refuses "
       "(patientx/ComfyUI-Zluda#263: a launcher set gfx1200 for an RX 9070 XT, which is gfx1201).",
       "Set it to the GPU's target (the one its HSA override maps it to, if any), or unset it.", needs=("env",),
       ok_is_evidence=False)
def triton_override_arch(f: Facts) -> Iterable[Finding]:
    value = f.env_var("TRITON_OVERRIDE_ARCH")
    if not value:
        yield skip("TRITON_OVERRIDE_ARCH is not set" if f.env_complete else "TRITON_OVERRIDE_ARCH unknown")
        return
    targets = sorted({t for g in amd_gpus(f) if (t := g.effective_gfx or g.gfx)})
    if not targets:
        yield skip(f"TRITON_OVERRIDE_ARCH={value}: no AMD GPU with a known target to compare it with")
        return
    asked = value.split(":", 1)[0].strip().lower()
    if asked in targets:
        yield ok(f"TRITON_OVERRIDE_ARCH={value} is the GPU's target")
        return
    want = targets[0] if len(targets) == 1 else None
    cmd = env_command(f, "TRITON_OVERRIDE_ARCH", want) if want else None  # words only where the OS is not shown
    yield fail(f"TRITON_OVERRIDE_ARCH={value}, but the GPU runs as {' / '.join(targets)}",
               "Triton then builds every kernel for another target, which the GPU refuses (or, for a target the HIP "
               "runtime does load, runs code not made for it).", evidence=("env",),
               fix=Fix(f"Set TRITON_OVERRIDE_ARCH to {want} where the launcher sets it, or remove it (Triton then "
                       "asks the device)." if want else "Set TRITON_OVERRIDE_ARCH to the target of the GPU the "
                       "program runs on (`amdgpu-arch` / `hipInfo` lists them), or remove it.",
                       (cmd,) if cmd else ()))


@check("triton-vendor-error", "triton", "Triton does not compile with NVIDIA's ptxas on an AMD machine.",
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
    cmd = _reinstall(f) if torch_build(f) == "rocm" and amd_host(f) else None
    if cmd is None:
        yield warn("Triton ran its NVIDIA (ptxas) backend",
                   "On an AMD machine that is a CUDA torch or PyPI's `triton` beside a ROCm torch; paste "
                   "`python -m pip list | grep -iE 'torch|triton'` and `rocminfo | grep gfx` to tell which.",
                   evidence=quote(errs))
        return
    yield fail("Triton ran its NVIDIA (ptxas) backend beside a ROCm torch", evidence=quote(errs),
               fix=Fix("Remove the foreign triton and reinstall the one torch pins.",
                       (f"{env_pip(f)} uninstall -y triton", cmd)))


CHECKS = (triton_missing, triton_duplicate_dists, triton_version_pin, triton_backend, triton_build_toolchain,
          triton_hip_linker, triton_override_arch, triton_vendor_error)
