"""The operating system, kernel, WSL, containers and the process environment; and what kind of machine this is
(AMD, NVIDIA or CPU-only), derived from the other topics."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, error, found, safe, unknown

if TYPE_CHECKING:
    from rocm_triton_doctor.check.facts import Facts


@dataclass(frozen=True)
class OsInfo:
    id: str
    version_id: str
    pretty_name: str
    id_like: tuple[str, ...] = ()


# -- parsers ----------------------------------------------------------------------------------------------------

def parse_key_value(text: str, sep: str = "=") -> dict[str, str]:
    """os-release style: KEY=value or KEY="value" per line."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or sep not in line:
            continue
        key, _, value = line.partition(sep)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def parse_kernel_config(text: str) -> dict[str, str]:
    """Kernel .config lines: CONFIG_X=y|m|value, or '# CONFIG_X is not set' (recorded as 'n')."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^# (CONFIG_\w+) is not set$", line)
        if m:
            out[m.group(1)] = "n"
            continue
        if line.startswith("CONFIG_") and "=" in line:
            k, _, v = line.partition("=")
            out[k] = v.strip().strip('"')
    return out


def container_from(cgroup: str | None, dockerenv: bool, containerenv: str | None) -> str | None:
    if containerenv is not None:
        return "podman"
    if dockerenv:
        return "docker"
    if cgroup:
        for marker, kind in (("docker", "docker"), ("kubepods", "kubernetes"), ("containerd", "containerd"),
                             ("libpod", "podman"), ("lxc", "lxc")):
            if marker in cgroup:
                return kind
    return None


def is_wsl(proc_version: str | None, osrelease: str | None) -> bool:
    text = f"{proc_version or ''} {osrelease or ''}".lower()
    return "microsoft" in text or "wsl" in text


# -- builders ---------------------------------------------------------------------------------------------------

class PlatformFacts(TypedDict):
    os: Fact[OsInfo]
    kernel_release: Fact[str]
    kernel_config: Fact[dict[str, str]]
    wsl: Fact[bool]
    container: Fact[str]
    env: Fact[dict[str, str]]
    which: Fact[dict[str, str | None]]


def build(snap: Mapping[str, Any]) -> PlatformFacts:
    release = safe("/proc/sys/kernel/osrelease", lambda: _kernel_release(snap))
    which = snap.get("which")
    return PlatformFacts(
        os=safe("/etc/os-release", lambda: _os(snap)),
        kernel_release=release,
        kernel_config=safe("/boot/config", lambda: _kernel_config(snap, release)),
        wsl=safe("/proc/version", lambda: _wsl(snap)),
        container=safe("/proc/1/cgroup", lambda: _container(snap)),
        env=safe("env", lambda: _env(snap)),
        which=found(dict(which), "which") if isinstance(which, dict) else unknown("which"),
    )


def _os(snap: Mapping[str, Any]) -> Fact[OsInfo]:
    f = snapshot.file(snap, "/etc/os-release")
    if not f.found:
        alt = snapshot.file(snap, "/usr/lib/os-release")
        if alt.found:
            f = alt
    if not f.found:
        return Fact(f.status, None, f.source, f.error)
    kv = parse_key_value(f.value or "")
    if "ID" not in kv:
        return error(f.source, "no ID= line")
    return found(OsInfo(kv.get("ID", "").lower(), kv.get("VERSION_ID", ""), kv.get("PRETTY_NAME", kv.get("NAME", "")),
                        tuple(kv.get("ID_LIKE", "").split())), f.source)


def _kernel_release(snap: Mapping[str, Any]) -> Fact[str]:
    f = snapshot.file(snap, "/proc/sys/kernel/osrelease")
    if f.found and (f.value or "").strip():
        return found((f.value or "").strip(), f.source)
    pv = snapshot.file(snap, "/proc/version")
    if pv.found:
        m = re.search(r"Linux version (\S+)", pv.value or "")
        if m:
            return found(m.group(1), pv.source)
        return error(pv.source, "no 'Linux version' in /proc/version")
    return Fact(f.status if f.status is not Status.FOUND else Status.UNKNOWN, None, f.source, f.error)


def _kernel_config(snap: Mapping[str, Any], release: Fact[str]) -> Fact[dict[str, str]]:
    if not release.found:
        return unknown("/boot/config-<release>")
    f = snapshot.file(snap, f"/boot/config-{release.value}")
    if not f.found:
        return Fact(f.status, None, f.source, f.error)
    return found(parse_kernel_config(f.value or ""), f.source)


def _wsl(snap: Mapping[str, Any]) -> Fact[bool]:
    pv, rel = snapshot.file(snap, "/proc/version"), snapshot.file(snap, "/proc/sys/kernel/osrelease")
    system = snap.get("system")
    if isinstance(system, dict) and system.get("wsl") is True:
        return found(True, "pasted text (rocminfo's 'WSL environment detected', a WSL2 kernel release)")
    if not (pv.found or rel.found):
        return unknown("/proc/version")
    dxg = snapshot.path(snap, "/dev/dxg")
    return found(is_wsl(pv.value, rel.value) or dxg.found, "/proc/version")


def _container(snap: Mapping[str, Any]) -> Fact[str]:
    cg = snapshot.file(snap, "/proc/1/cgroup")
    denv, cenv = snapshot.path(snap, "/.dockerenv"), snapshot.file(snap, "/run/.containerenv")
    system = snap.get("system")
    prompt = system.get("container_prompt") if isinstance(system, dict) else None
    if not (cg.known or denv.known or cenv.known):
        if isinstance(prompt, str):  # pasted text: the prompt's hostname is a docker/podman container id
            return found("docker/podman", f"shell prompt (hostname {prompt} is a container id)")
        return unknown("/proc/1/cgroup")
    kind = container_from(cg.value, denv.found, cenv.value if cenv.found else None)
    if kind:
        return found(kind, "/proc/1/cgroup, /.dockerenv, /run/.containerenv")
    if not (denv.known and cenv.known):
        # cgroup v2 shows `0::/` inside containers too: without the runtimes' marker files it proves nothing.
        return unknown("/.dockerenv, /run/.containerenv")
    return absent("/proc/1/cgroup")


def _env(snap: Mapping[str, Any]) -> Fact[dict[str, str]]:
    e = snap.get("env")
    if not isinstance(e, dict):
        return unknown("env")
    return found({str(k): str(v) for k, v in e.items() if v is not None}, "env")


# -- what kind of machine, from the facts of every topic -------------------------------------------------------

def os_family(f: Facts) -> str | None:
    """"windows" where the evidence shows Windows (sources/host.py), "linux" where a Linux kernel or OS release was
    read, None when neither is shown: a fix's shell is never guessed."""
    system = f.raw.get("system")
    if isinstance(system, dict) and system.get("os_family") == "windows":
        return "windows"
    return "linux" if f.kernel_release.found or f.os.found else None


def env_command(f: Facts, name: str, value: str) -> str | None:
    """The command that sets an environment variable in the shell the evidence shows (cmd.exe's `set`, a POSIX
    `export`), or None when the OS is not shown."""
    return {"windows": f"set {name}={value}", "linux": f"export {name}={value}"}.get(os_family(f) or "")


def amd_host(f: Facts) -> bool | None:
    """Is this an AMD GPU machine? True/False when we can tell, None when the snapshot does not say."""
    if f.amd_gpus_present:
        return True
    if f.pci_amd_gpus:
        return True
    if f.amdgpu_initstate.found and f.amdgpu_initstate.value == "live":
        return True
    if f.dev_kfd.found:
        return True
    rt = f.runtime.value if f.runtime.found else None
    if rt is not None and rt.hip_version and rt.is_available and rt.devices:
        return True  # a ROCm torch that sees a GPU: only an AMD GPU answers HIP on Linux
    if f.amd_gpus_present is False or f.amdgpu_initstate.known:
        return False
    return None


def nvidia_host(f: Facts) -> bool:
    """Is an NVIDIA GPU shown (nvidia-smi, collect_env's GPU list, a CUDA torch that sees a device)?"""
    if f.nvidia_gpus_present:
        return True
    system = f.raw.get("system")
    if isinstance(system, dict) and (system.get("nvidia_gpus") or system.get("nvidia_smi_table")):
        # collect_env named NVIDIA GPUs through nvidia-smi (sources/collect_env.py), or nvidia-smi printed its GPU
        # table (sources/host.py): both only with an NVIDIA GPU present. A driver version alone is not: collect_env
        # reports one on machines where only the driver package is left (vllm#9319, an MI60).
        return True
    rt = f.runtime.value if f.runtime.found else None
    return bool(rt is not None and rt.cuda_version and not rt.hip_version and rt.is_available and rt.devices)


def accelerator(f: Facts) -> str:
    """amd | nvidia | cpu | unknown — what kind of accelerator this machine has. `cpu` only when the absence of
    an AMD GPU was probed (KFD/sysfs/PCI) and no NVIDIA GPU is known: a snapshot that does not say is `unknown`, and
    nothing that needs the hardware (an index URL, an override) may be derived from it (issue #10 fix safety)."""
    if amd_host(f):
        return "amd"
    if nvidia_host(f):
        return "nvidia"
    if amd_host(f) is False and f.nvidia.known:
        return "cpu"
    return "unknown"
