"""The system ROCm install, and how it interacts with the ROCm that PyTorch wheels bundle."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.checks.torch import pip
from rocm_triton_doctor.check.facts import Facts
from rocm_triton_doctor.check.facts.errors import with_signature
from rocm_triton_doctor.check.facts.platform import amd_host
from rocm_triton_doctor.check.facts.python import rocm_torch, torch_rocm
from rocm_triton_doctor.check.findings import Finding, Fix


@check("rocm-install", "rocm", "Which system ROCm is installed (/opt/rocm, /opt/rocm-*, ROCM_PATH).",
       "Tools such as rocminfo, and Triton's HIP lookup, use the system ROCm; PyTorch wheels do not need it.",
       "Nothing to fix by itself; other findings say when the system ROCm matters.", ok_is_evidence=False)
def rocm_install(f: Facts) -> Iterable[Finding]:
    if not f.rocm.found or not f.rocm.value:
        if f.rocm.known:
            yield (info if amd_host(f) else ok)(
                "no system ROCm installed",
                "Fine for PyTorch: ROCm wheels bundle HIP, rocBLAS, MIOpen; only the amdgpu kernel driver is needed.")
        else:
            yield skip("system ROCm unknown", f.rocm.describe())
        return
    r = f.rocm.value
    rel = knowledge.rocm_release(r.version or "")
    others = [f"{v} ({p})" for p, v in r.versions if p != r.path]
    detail = f"{r.path} → ROCm {r.version}"
    if r.link_target:
        detail += f" (/opt/rocm points to {r.link_target})"
    if others:
        detail += "; also installed: " + ", ".join(others)
    if rel is None:
        yield info(f"ROCm {r.version} (newer than, or unknown to, the doctor's knowledge as of {knowledge.as_of()})",
                   detail, evidence=(f.rocm.source,))
    else:
        yield ok(f"ROCm {r.version} at {r.path}", detail, evidence=(f.rocm.source,))


@check("rocm-torch-hip-mismatch", "rocm", "The system ROCm and the ROCm bundled in torch are the same major.minor.",
       "When both are present, a process can load libraries from both (via LD_LIBRARY_PATH or Triton's HIP "
       "search), mixing two HIP runtimes (ROCm/triton#626).",
       "Keep them aligned, or keep the system ROCm out of torch processes' library path.", ok_is_evidence=False)
def rocm_torch_hip_mismatch(f: Facts) -> Iterable[Finding]:
    if not rocm_torch(f):
        yield skip("no ROCm build of torch")
        return
    tr = torch_rocm(f)
    if not f.rocm.found or not f.rocm.value or not f.rocm.value.version:
        if f.rocm.known:
            yield ok(f"torch bundles ROCm {tr or '?'}; no system ROCm to conflict with")
        else:
            yield skip("system ROCm unknown", "Paste `cat /opt/rocm/.info/version` (or `apt show rocm-libs`).")
        return
    sys_v = ".".join(f.rocm.value.version.split(".")[:2])
    if tr is None or tr == sys_v:
        yield ok(f"system ROCm {f.rocm.value.version} matches torch's bundled ROCm {tr or '?'}")
        return
    # An extension built against the system ROCm (flash-attention, CK, a custom op) loaded into torch's bundled
    # runtime fails at its first launch: 'shared object initialization failed' / undefined hip symbols
    # (Dao-AILab/flash-attention#1652).
    mixed = with_signature(f.errors, "shared-object-init-failed", "undefined-symbol-hip", "rocblas-tensile-missing")
    index = "rocm" + sys_v
    cmd = (f"{pip(f)} install --force-reinstall torch torchvision torchaudio --index-url {knowledge.index_url(index)}"
           if mixed and knowledge.index_arches(index) else None)
    yield (fail if mixed else warn)(
        f"system ROCm {f.rocm.value.version} differs from torch's bundled ROCm {tr}",
        ("The error shows code built for one ROCm running on the other's runtime." if mixed else
         "Usually harmless, since torch loads its own libraries from torch/lib; it breaks when the system "
         "libraries get loaded into the same process (see 'ld-library-path-rocm'), and Triton may pick the "
         "system libamdhip64 if TRITON_LIBHIP_PATH or the search order points there."),
        evidence=(f.rocm.source, "torch version"),
        fix=Fix(f"Install a torch built for ROCm {sys_v} ({knowledge.index_url(index)}) so extensions built "
                "against the system ROCm match it, or rebuild the extension against torch's ROCm.",
                (cmd,) if cmd else ()))


@check("ld-library-path-rocm", "rocm", "LD_LIBRARY_PATH does not pull system ROCm libraries into a ROCm torch.",
       "Libraries found through LD_LIBRARY_PATH can replace the ones bundled in the wheel: two HIP runtimes or "
       "mismatched rocBLAS in one process ('invalid device function', segfaults at init).",
       "Remove /opt/rocm*/lib from LD_LIBRARY_PATH for processes that use the pip wheel.", needs=("env",), ok_is_evidence=False)
def ld_library_path_rocm(f: Facts) -> Iterable[Finding]:
    ldp = f.env_var("LD_LIBRARY_PATH") or ""
    rocm_dirs = [d for d in ldp.split(":") if re.search(r"/rocm[^/]*(/|$)", d)]
    if not rocm_dirs:
        if f.env_unset("LD_LIBRARY_PATH") is None:
            yield skip("LD_LIBRARY_PATH unknown", "Paste `echo $LD_LIBRARY_PATH`.")
        else:
            yield ok("LD_LIBRARY_PATH has no ROCm directories")
        return
    if not rocm_torch(f):
        yield info(f"LD_LIBRARY_PATH contains {', '.join(rocm_dirs)}", "No ROCm torch installed; nothing to clash with.")
        return
    tr = torch_rocm(f)
    sys_v = f.rocm.value.version if f.rocm.found and f.rocm.value else None
    same = sys_v is not None and tr is not None and sys_v.startswith(tr)
    sev = info if same else warn
    yield sev(f"LD_LIBRARY_PATH puts system ROCm ({', '.join(rocm_dirs)}) in front of torch's bundled ROCm {tr or '?'}",
              "Libraries with the same soname can be taken from there instead of torch/lib."
              + (" Versions match, so this is probably harmless." if same else ""),
              evidence=("env: LD_LIBRARY_PATH",),
              fix=Fix("Remove ROCm directories from LD_LIBRARY_PATH (check ~/.bashrc and module files).",
                      ("export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v rocm | paste -sd:)",)))


PIN_COMMAND = ("printf 'Package: *\\nPin: release o=repo.radeon.com\\nPin-Priority: 600\\n' | "
               "sudo tee /etc/apt/preferences.d/rocm-pin-600")
APT_GUIDE = ("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/install-methods/package-manager/"
             "package-manager-ubuntu.html")
_ROCM_PKG = re.compile(r"^(?:rocm|hip|roc|hsa|miopen|amdgpu|amd-smi|comgr|rccl|migraphx|half)", re.I)


@check("rocm-apt-distro-package", "rocm", "apt installs AMD's ROCm packages, not the distribution's same-named ones.",
       "Ubuntu 24.04+ and Debian ship their own ROCm components (universe: rocminfo 5.7.1, …); when apt prefers them, "
       "AMD's packages cannot be installed: 'rocm-hip-runtime : Depends: rocminfo (= 1.0.0.60200-…) but 5.7.1-3build1 "
       "is to be installed' (legacy-rocm-build#3656).",
       "Pin AMD's repository above the distribution's (AMD's install guide) and install the exact versions.")
def rocm_apt_distro_package(f: Facts) -> Iterable[Finding]:
    errs = with_signature(f.errors, "apt-distro-rocm-package")
    wanted = [w for e in errs for w in _unmet(e.text)
              if _ROCM_PKG.match(w[0]) or _ROCM_PKG.match(w[1])]  # other packages' conflicts are not ours
    if not wanted:
        yield skip("no apt dependency error between ROCm packages in the evidence")
        return
    pins = " ".join(dict.fromkeys(f"{pkg}={want}" for _, pkg, want, _, _ in wanted))
    by, pkg, want, got, line = wanted[0]
    yield fail(f"apt picks {pkg} {got} where {by} needs {want}",
               "A package of the same name from another archive (the distribution's own ROCm packages) outranks the "
               "version AMD's ROCm package depends on, so the ROCm install stops.",
               evidence=tuple(f"{e.origin}: {line}" for e in errs[:1]),
               fix=Fix("Give AMD's repository priority (the pin file of AMD's ROCm install guide for Ubuntu), then "
                       "install the exact versions apt named and the ROCm package again.",
                       (PIN_COMMAND,
                        f"sudo apt-get install --allow-downgrades {pins} {by}"),
                       needs_sudo=True),
               links=(APT_GUIDE,))


def _unmet(text: str) -> list[tuple[str, str, str, str, str]]:
    """apt's unmet dependencies, (package, dependency, version needed, version apt picked, the line): `pkg : Depends:
    dep (= want) but got is to be installed`, and the continuation lines apt indents under the same package (its first
    line may be another kind: `… but it is not going to be installed`, legacy-rocm-build#6367)."""
    out, by = [], ""
    for ln in text.splitlines():
        head = re.match(r"^\s*([\w.+-]+) : (?:Pre)?Depends:", ln)
        if head:
            by = head.group(1)
        elif not re.match(r"^\s+(?:Pre)?Depends:", ln):
            by = "" if ln.strip() else by
        m = re.search(r"Depends: ([\w.+-]+) \(= ([^)\s]+)\) but (\S+) is to be installed", ln)
        if m and by:
            out.append((by, m.group(1), m.group(2), m.group(3), ln.strip()))
        # apt's resolver debug (`Broken rocm:amd64 Depends on rocminfo:amd64 < 5.7.1-3build1 @ii mK > (=
        # 1.0.0.70001-42~24.04)`, rocm-install-on-linux#583): the installed (@ii) version is not the one needed
        m = re.search(r"Broken ([\w.+-]+)(?::[\w-]+)? Depends on ([\w.+-]+)(?::[\w-]+)? < ([^\s>]+) @ii [^>]*> "
                      r"\(= ([^)\s]+)\)", ln)
        if m:
            out.append((m.group(1), m.group(2), m.group(4), m.group(3), ln.strip()))
    return out


@check("hip-headers-mixed", "rocm", "One HIP installation's headers: not the distribution's beside AMD's /opt/rocm.",
       "The distribution's HIP development package (Debian/Ubuntu libamdhip64-dev, Fedora rocm-hip-devel) puts HIP's "
       "headers in /usr/include, which compilers search before /opt/rocm*/include: a build against AMD's ROCm then "
       "mixes two HIP releases' headers and fails or breaks at run time (llama.cpp#15196).",
       "Remove the distribution's HIP development packages, or build against them alone.", ok_is_evidence=False)
def hip_headers_mixed(f: Facts) -> Iterable[Finding]:
    system = f.raw.get("system")
    roots = system.get("hip_include_roots") if isinstance(system, dict) else None
    roots = [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []
    distro = [r for r in roots if not r.startswith("/opt/rocm")]
    amd = [r for r in roots if r.startswith("/opt/rocm")]
    if not roots:
        yield skip("no HIP header paths in the evidence", "`find / -name hip_runtime.h 2>/dev/null` lists them.")
        return
    if not (distro and amd):
        yield ok(f"one HIP header tree: {', '.join(roots)}")
        return
    yield fail(f"two HIP installations' headers: {', '.join(distro)}/include/hip and {', '.join(amd)}/include/hip",
               "The distribution's HIP headers sit in the compiler's default include path, ahead of AMD's ROCm under "
               "/opt; a build for AMD's ROCm mixes the two releases' headers.",
               evidence=tuple(f"{r}/include/hip" for r in roots),
               fix=Fix("Remove the distribution's HIP development packages so one HIP remains (Debian/Ubuntu: "
                       "libamdhip64-dev and the other librocm*-dev / hipcc packages, `dpkg -S /usr/include/hip` names "
                       "them; Fedora: rocm-hip-devel, `rpm -qf /usr/include/hip`), then rebuild; or build against the "
                       "distribution's ROCm alone."),
               links=("https://github.com/ggml-org/llama.cpp/issues/15196",))


CHECKS = (rocm_install, rocm_torch_hip_mismatch, ld_library_path_rocm, rocm_apt_distro_package, hip_headers_mixed)
