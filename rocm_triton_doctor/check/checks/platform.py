"""Operating system, kernel, WSL and containers."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.base import check, fail, info, ok, skip, warn
from rocm_triton_doctor.check.facts import Facts, Status
from rocm_triton_doctor.check.facts.errors import quote, with_signature
from rocm_triton_doctor.check.facts.platform import amd_host
from rocm_triton_doctor.check.facts.python import rocm_torch, torch_version
from rocm_triton_doctor.check.findings import Finding, Fix

# The device and group flags AMD's container docs use for every ROCm image.
DOCKER_RUN = ("{engine} run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
              "--security-opt seccomp=unconfined IMAGE")
MATRIX = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html"


def _os_listed(distros: dict[str, tuple[str, ...]], os_id: str, version_id: str) -> bool | None:
    """True listed, False family listed but not this version, None family not listed at all."""
    versions = distros.get(os_id)
    if versions is None:
        return None
    return any(version_id == v or version_id.startswith(v + ".") for v in versions)


def _first_rocm_for(os_id: str, version_id: str) -> str | None:
    from rocm_triton_doctor.knowledge import _load  # the raw rows: we scan releases in order

    for r in sorted(_load("rocm_releases.json")["releases"], key=lambda r: Version(r["version"])):
        d = r.get("distros")
        if d and _os_listed({k: tuple(v) for k, v in d.items()}, os_id, version_id):
            return str(r["version"])
    return None


@check("os-supported", "platform", "The Linux distribution and release are in the installed ROCm's support matrix.",
       "ROCm packages and the amdgpu-dkms driver are built for specific distro releases; on others the driver "
       "build or the user-space libraries fail (e.g. ROCm 5.7 predates Ubuntu 24.04).",
       "Install a ROCm release that lists this OS, or rely on the ROCm bundled inside the PyTorch wheel.", ok_is_evidence=False)
def os_supported(f: Facts) -> Iterable[Finding]:
    if not f.os.found or f.os.value is None:
        yield skip("OS unknown", f"/etc/os-release: {f.os.describe()}")
        return
    osi = f.os.value
    if not f.rocm.found or f.rocm.value is None or not f.rocm.value.version:
        if amd_host(f):
            first = _first_rocm_for(osi.id, osi.version_id)
            text = (f"{osi.pretty_name}: no system ROCm installed. PyTorch's ROCm wheels bundle their own ROCm "
                    "user space, so only the amdgpu kernel driver is needed.")
            if first:
                text += f" First ROCm release listing this OS: {first}."
            yield info(f"{osi.pretty_name} (no system ROCm)", text)
        else:
            yield ok(osi.pretty_name or f"{osi.id} {osi.version_id}")
        return
    version = f.rocm.value.version
    rel = knowledge.rocm_release(version)
    if rel is None:
        yield info(f"ROCm {version} is not in the doctor's knowledge (as of {knowledge.as_of()})",
                   f"Cannot judge {osi.pretty_name} against ROCm {version}; see {MATRIX}")
        return
    if rel.distros is None:
        yield info(f"{osi.pretty_name} with ROCm {version}: OS support not confirmed",
                   f"No AMD support matrix for ROCm {rel.version} was available to the doctor (UNVERIFIED). "
                   f"Source: {rel.source}.", links=(MATRIX,))
        return
    listed = _os_listed(rel.distros, osi.id, osi.version_id)
    if listed:
        yield ok(f"{osi.pretty_name} is supported by ROCm {version}")
        return
    first = _first_rocm_for(osi.id, osi.version_id)
    supported = ", ".join(f"{k} {'/'.join(v)}" for k, v in rel.distros.items())
    if listed is None:
        yield warn(f"{osi.pretty_name} is not an AMD-supported distribution for ROCm {version}",
                   f"ROCm {rel.version} supports: {supported}. Community packages may work but are untested by AMD.",
                   evidence=(f.os.source, f.rocm.source), links=(MATRIX,))
        return
    yield fail(
        f"ROCm {version} does not support {osi.pretty_name}",
        f"ROCm {rel.version} supports {osi.id} {' / '.join(rel.distros[osi.id])} only"
        + (f"; the first release that lists {osi.id} {osi.version_id} is ROCm {first}." if first else ".")
        + " The DKMS driver and system libraries of this ROCm are not built for this OS.",
        evidence=(f.os.source, f.rocm.source),
        fix=Fix(f"Replace the system ROCm with {('ROCm ' + first + ' or newer') if first else 'a release that lists this OS'} "
                "(amdgpu-install from AMD's repository for your distro), or remove it and use the ROCm bundled "
                "in the PyTorch wheel, which needs only the in-tree amdgpu driver.",
                (), needs_sudo=True, needs_reboot=True),
        links=(MATRIX,))


WSL_GUIDE = "https://rocm.docs.amd.com/projects/radeon-ryzen/en/latest/docs/install/installrad/wsl/howto_wsl.html"


@check("wsl", "platform", "Whether this is WSL, which needs AMD's WSL-specific ROCm path.",
       "Under WSL there is no /dev/kfd: ROCm reaches the GPU through /dev/dxg, which the download.pytorch.org "
       "ROCm wheels do not support (ROCm/hip#3710).",
       "Use AMD's 'ROCm on WSL' packages and the repo.radeon.com wheels, then point torch at the WSL runtime.", ok_is_evidence=False)
def wsl(f: Facts) -> Iterable[Finding]:
    raw_system = f.raw.get("system")
    wsl_install = isinstance(raw_system, dict) and bool(raw_system.get("wsl_install"))
    engine = with_signature(f.errors, "wsl-no-engine-id")
    if engine and (wsl_install or (f.wsl.found and f.wsl.value)):
        # ROCr's WSL path aborts when the Windows driver reports no engine version for the GPU
        # (legacy-rocm-build#6204): the GPU or the Windows driver is outside this release's WSL support. Its message
        # names HSA_OVERRIDE_GFX_VERSION, which is not a fix under WSL.
        yield fail("WSL: ROCm's runtime got no engine version for the GPU from the Windows driver",
                   "rocminfo (ROCr) aborted on the EngineId assertion: through /dev/dxg the Windows driver did not "
                   "describe this GPU, so the ROCm-on-WSL release does not support this GPU or driver version.",
                   evidence=quote(engine),
                   fix=Fix("Check the GPU and the Windows Adrenalin driver against AMD's ROCm-on-WSL compatibility "
                           "matrix for the installed ROCm release, and update the Windows driver to the version it "
                           "names; a GFX override does not help under WSL."),
                   links=(WSL_GUIDE,))
        return
    if not f.wsl.found:
        yield skip("cannot tell whether this is WSL", f.wsl.describe())
        return
    if not f.wsl.value:
        yield ok("not WSL")
        return
    from rocm_triton_doctor.check.facts.platform import accelerator
    from rocm_triton_doctor.check.facts.python import torch_build

    if accelerator(f) == "nvidia" or (torch_build(f) == "cuda" and amd_host(f) is not True):
        # CUDA on WSL2 is NVIDIA's own supported path: the ROCm-on-WSL advice does not apply (held-out capture
        # vllm#9293, an RTX 4070 laptop).
        yield ok("WSL with an NVIDIA GPU / CUDA torch: the ROCm-on-WSL path does not apply")
        return
    seen = f.raw.get("gpus_seen")
    listed = [e for e in seen if isinstance(e, dict) and e.get("tool") == "llama.cpp"] if isinstance(seen, list) else []
    if listed and not f.errors.found:
        # llama.cpp's ROCm backend listed the GPU (`ROCm0: AMD Radeon …`, `Device 0: …, gfx1151`): the HIP runtime
        # enumerated it through /dev/dxg, so the WSL runtime is in place (rocm-cli#276: inference ran under WSL).
        name = str(listed[0].get("name") or listed[0].get("gfx") or "the GPU")
        yield ok(f"WSL with a working ROCm runtime: llama.cpp's ROCm backend lists {name}",
                 "The WSL runtime is in place (the HIP runtime enumerated the GPU through /dev/dxg).")
        return
    if amd_host(f) is not True and not (rocm_torch(f) or f.rocminfo.value is not None or f.rocm.found):
        yield skip("WSL; whether this machine runs ROCm is unknown", "Paste rocminfo and the torch version.")
        return
    dxg = "present" if f.dev_dxg.found else "absent"
    detail = (f"WSL kernel detected (/proc/version); /dev/dxg is {dxg}, /dev/kfd is "
              f"{'present' if f.dev_kfd.found else 'absent'}. ROCm under WSL talks to the Windows driver through "
              "/dev/dxg; the download.pytorch.org ROCm wheels expect /dev/kfd and fail to see the GPU.")
    fix = Fix("ROCm on WSL works only with the ROCm releases and distributions AMD's WSL compatibility matrix lists "
              "(Ubuntu 22.04 / 24.04 WSL distributions, specific ROCm versions, a Radeon GPU and Windows driver it "
              "names). Install AMD's ROCm-on-WSL packages (amdgpu-install --usecase=wsl,rocm --no-dkms), install the "
              "matching torch wheel from repo.radeon.com, and replace the wheel's bundled libhsa-runtime64.so with "
              "the WSL one from /opt/rocm/lib (AMD's WSL guide).",
              ("sudo amdgpu-install -y --usecase=wsl,rocm --no-dkms",
               ("location=$(python -c 'import torch,os;print(os.path.dirname(torch.__file__))'); "
                "rm -f ${location}/lib/libhsa-runtime64.so*; cp /opt/rocm/lib/libhsa-runtime64.so.1 ${location}/lib/")),
              needs_sudo=True)
    links = (WSL_GUIDE, "https://github.com/ROCm/hip/issues/3710")
    # download.pytorch.org wheels carry a plain +rocmX.Y tag; AMD's repo.radeon.com builds (the ones AMD documents for
    # WSL) add .git<hash>. The plain Linux wheel cannot reach the GPU through /dev/dxg (ROCm/hip#3710).
    rt = f.runtime.value if f.runtime.found else None
    if rt is not None and rt.is_available and (rt.hip_version or rocm_torch(f)):
        # A ROCm torch that has a GPU under WSL reached it through /dev/dxg: the WSL runtime is in place (ComfyUI's
        # `Device: cuda:0 AMD Radeon RX 7900 XTX` under WSL, legacy-rocm-build#5000, with no device list printed).
        seen = f"{len(rt.devices)} GPU(s)" if rt.devices else "the GPU"
        yield ok(f"WSL with a working ROCm runtime: torch sees {seen}",
                 "The WSL runtime is in place (torch reaches the GPU through /dev/dxg).")
        return
    v = torch_version(f) or ""
    pytorch_org_wheel = rocm_torch(f) and ".git" not in v
    # rocminfo/HSA failing under WSL (OUT_OF_RESOURCES, no agents) is the WSL runtime not being in place
    # (ROCm#5106, ROCm#3561), not a permission or override problem.
    rep = f.rocminfo.value  # set also when rocminfo failed (Status.ERROR keeps the partial report)
    no_agent = isinstance(raw_system, dict) and raw_system.get("rocminfo_gpu_agents") == 0  # the issue form's GPU: list
    hsa_failed = (bool(with_signature(f.errors, "hsa-out-of-resources", "no-hip-gpus", "no-rocm-capable-device"))
                  or (rep is not None and not rep.gpus and bool(rep.errors))  # rocminfo failed or died under WSL
                  or no_agent)
    not_working = hsa_failed or (rt is not None and rt.is_available is False)
    if not (pytorch_org_wheel and not_working) and not hsa_failed:
        # Neither a failure nor the wrong wheel is shown: say what WSL needs, without commands for a setup that may
        # already be right.
        yield warn("WSL: ROCm needs AMD's WSL runtime, not the plain Linux stack", detail,
                   fix=Fix(fix.text), links=links, evidence=("/proc/version", "/dev/dxg"))
        return
    yield fail("WSL: ROCm needs AMD's WSL runtime, not the plain Linux stack", detail, fix=fix, links=links,
               evidence=("/proc/version", "/dev/dxg"))


@check("container-passthrough", "platform", "Inside a container, /dev/kfd and /dev/dri are passed through.",
       "A container started without --device=/dev/kfd --device=/dev/dri sees no AMD GPU at all; torch then "
       "reports no devices and Triton finds 0 active drivers.",
       "Restart the container with the devices and the video/render groups.")
def container_passthrough(f: Facts) -> Iterable[Finding]:
    runs = f.raw.get("container_run")
    vendor = stack_vendor(f)
    for run in runs if isinstance(runs, list) else ():
        # The run command itself (pasted): without --device=/dev/kfd (or --privileged) the container has no KFD.
        if not isinstance(run, dict) or run.get("privileged") or run.get("runtime") not in ("docker", "podman"):
            continue
        if vendor == "nvidia":
            if not run.get("gpus"):
                # An NVIDIA container gets its GPU and driver from the NVIDIA Container Toolkit, not from device nodes:
                # AMD's --device=/dev/kfd would be wrong advice there (held-out capture anomalib#584).
                engine = str(run["runtime"])
                yield fail(f"{engine} run command without --gpus (an NVIDIA/CUDA container)",
                           "Without --gpus the NVIDIA Container Toolkit injects neither the GPU nor the driver: inside, "
                           "nvidia-smi is missing and torch.cuda.is_available() is False.",
                           evidence=("container run command",),
                           fix=Fix("Start the container with the GPUs (the host needs the NVIDIA Container Toolkit).",
                                   (f"{engine} run --gpus all IMAGE",)),
                           links=("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/",))
                return
            continue
        off = [str(d) for d in run.get("commented_out") or ()] if isinstance(run.get("commented_out"), list) else []
        if off:
            # A compose file written for ROCm (its /dev/kfd item, which only AMD's KFD has) with the device items left
            # commented out: the service starts without them (hartmark/sd-rocm#4: "GFX version detection error").
            yield fail(f"the compose file leaves {' and '.join(off)} commented out",
                       "The service starts without those device nodes, so ROCm inside it finds no GPU.",
                       evidence=("compose file",),
                       fix=Fix(f"Uncomment the {' and '.join(off)} item(s) under the service's devices: (keep /dev/kfd "
                               "and /dev/dri both), then recreate the container (docker compose up -d "
                               "--force-recreate)."),
                       links=("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html",))
            return
        if vendor != "amd":
            # Which vendor's passthrough this container needs is unknown: no device advice from an unknown.
            yield skip("a container run command without GPU devices; whether the GPU is AMD or NVIDIA is unknown",
                       "Paste rocminfo or nvidia-smi from the host.")
            return
        devices = [str(d) for d in run.get("devices") or ()] if isinstance(run.get("devices"), list) else []
        missing = [d for d in ("/dev/kfd", "/dev/dri") if not any(x == d or x.startswith(d + "/") for x in devices)]
        if missing:
            engine = str(run["runtime"])
            yield fail(f"{engine} run command without {' and '.join(missing)}",
                       "A container sees only the device nodes passed to it: without these ROCm finds no GPU "
                       "('Unable to open /dev/kfd read-write: No such file or directory').",
                       evidence=("container run command",),
                       fix=Fix("Add the AMD device nodes and groups to the run command.",
                               (DOCKER_RUN.format(engine=engine),)),
                       links=("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html",))
            return
    if f.container.status is Status.UNKNOWN:
        yield skip("cannot tell whether this is a container")
        return
    if not f.container.found:
        yield ok("not in a container")
        return
    kind = f.container.value
    kfd, dri = f.dev_kfd.found, f.render_nodes.found
    if kfd and dri:
        yield ok(f"{kind} container with /dev/kfd and /dev/dri passed through")
        return
    if amd_host(f) is False:
        # sysfs (PCI devices, /sys/module/amdgpu) is the host's even inside a container, so "no AMD GPU" is reliable.
        yield ok(f"{kind} container; the host shows no AMD GPU, so no AMD devices are expected")
        return
    if f.dev_kfd.status is Status.UNKNOWN or (kfd and f.render_nodes.status is Status.UNKNOWN):
        yield skip(f"{kind} container; its device nodes were not recorded", "Paste `ls -l /dev/kfd /dev/dri` from inside it.")
        return
    missing = [p for p, present in (("/dev/kfd", kfd), ("/dev/dri/renderD*", dri))
               if not present and not (p.startswith("/dev/dri") and f.render_nodes.status is Status.UNKNOWN)]
    engine = "podman" if kind == "podman" else "docker"
    yield fail(f"{kind} container without {' and '.join(missing)}",
               "The GPU device nodes are not visible inside this container, so ROCm cannot see any AMD GPU.",
               evidence=(f.container.source, "/dev/kfd", "/dev/dri"),
               fix=Fix("Start the container with the AMD device nodes and groups (Kubernetes: use the AMD GPU "
                       "device plugin and request amd.com/gpu).",
                       (DOCKER_RUN.format(engine=engine),)),
               links=("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html",))


def stack_vendor(f: Facts) -> str:
    """amd | nvidia | unknown: whose GPU stack the evidence (a pasted container run, a pip log) is meant for. AMD: the
    machine is known AMD, or the text shows ROCm (a ROCm torch, rocminfo, a KFD error, an image named *rocm*);
    NVIDIA: a CUDA torch, nvcc or nvidia-smi in the text, or --gpus on a run line. Both or neither: unknown."""
    from rocm_triton_doctor.check.facts.platform import accelerator
    from rocm_triton_doctor.check.facts.python import torch_build

    raw_runs = f.raw.get("container_run")
    runs = [r for r in raw_runs if isinstance(r, dict)] if isinstance(raw_runs, list) else []
    raw_system = f.raw.get("system")
    system: dict[str, object] = raw_system if isinstance(raw_system, dict) else {}
    amd = (amd_host(f) is True or torch_build(f) == "rocm" or f.rocminfo.value is not None
           or bool(with_signature(f.errors, "kfd-open-no-such-file", "kfd-open-permission-denied"))
           or any("rocm" in str(r.get("image") or "").lower() or r.get("rocm_flag") for r in runs))
    nvidia = (accelerator(f) == "nvidia" or torch_build(f) == "cuda" or bool(system.get("cuda_toolkit"))
              or bool(system.get("nvidia_smi_missing")) or any(r.get("gpus") for r in runs))
    return "amd" if amd and not nvidia else "nvidia" if nvidia and not amd else "unknown"


@check("kernel-config-hsa", "platform", "The running kernel was built with CONFIG_HSA_AMD (the KFD compute interface).",
       "Without CONFIG_HSA_AMD amdgpu drives the display but exposes no /dev/kfd, so no ROCm program can use the GPU.",
       "Boot a distribution kernel (they enable it) or rebuild with CONFIG_HSA_AMD=y.")
def kernel_config_hsa(f: Facts) -> Iterable[Finding]:
    if f.kfd_topology.found:
        yield ok("kernel has KFD (CONFIG_HSA_AMD) — the KFD topology exists")
        return
    if f.dev_kfd.found and not f.wsl.value:
        yield ok("kernel has KFD (CONFIG_HSA_AMD) — /dev/kfd exists")
        return
    if not f.kernel_config.found or f.kernel_config.value is None:
        if amd_host(f):
            yield skip("kernel config not readable", f"{f.kernel_config.describe()}; cannot confirm CONFIG_HSA_AMD")
        else:
            yield skip("not applicable: no AMD GPU")
        return
    cfg = f.kernel_config.value
    hsa = cfg.get("CONFIG_HSA_AMD", "n")
    drm = cfg.get("CONFIG_DRM_AMDGPU", "n")
    if hsa in ("y", "m"):
        yield ok(f"CONFIG_HSA_AMD={hsa} in {f.kernel_config.source}")
        return
    if not amd_host(f) and drm == "n":
        yield skip("not applicable: kernel without amdgpu and no AMD GPU")
        return
    yield fail(f"kernel {f.kernel_release.value} was built without CONFIG_HSA_AMD",
               f"{f.kernel_config.source}: CONFIG_HSA_AMD={'not set' if hsa == 'n' else hsa}, "
               f"CONFIG_DRM_AMDGPU={drm}. amdgpu can drive displays but there is no KFD (/dev/kfd), so ROCm "
               "cannot run compute work.",
               evidence=(f.kernel_config.source,),
               fix=Fix("Boot your distribution's stock kernel, or rebuild this one with CONFIG_HSA_AMD=y "
                       "(and CONFIG_HSA_AMD_SVM=y), then reboot.",
                       ("grep -E 'CONFIG_HSA_AMD|CONFIG_DRM_AMDGPU' /boot/config-$(uname -r)",),
                       needs_sudo=True, needs_reboot=True))


CHECKS = (os_supported, wsl, container_passthrough, kernel_config_hsa)
