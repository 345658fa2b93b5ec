"""Pure parsers from tool/sysfs text to plain data. They never raise on bad input: garbage gives empty or partial
results, and the fact builder decides what that means. Every format here was checked against real captures
in tests/fixtures/text (each noting its public source)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field


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


def parse_kfd_properties(text: str) -> dict[str, int]:
    """KFD `nodes/N/properties`: one `key value` pair per line, decimal integers (kfd_topology.c)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        try:
            out[parts[0]] = int(parts[1])
        except ValueError:
            continue
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


@dataclass
class RocminfoAgent:
    name: str = ""
    marketing_name: str = ""
    device_type: str = ""
    node: int | None = None
    uuid: str = ""
    chip_id: int | None = None
    compute_units: int | None = None
    isas: list[str] = field(default_factory=list)


@dataclass
class RocminfoReport:
    agents: list[RocminfoAgent] = field(default_factory=list)
    rock_loaded: bool | None = None
    errors: list[str] = field(default_factory=list)  # lines that say what went wrong (permission, HSA errors)

    @property
    def gpus(self) -> list[RocminfoAgent]:
        return [a for a in self.agents if a.device_type.upper() == "GPU"]


_ERROR_PATTERNS = ("Unable to open /dev/kfd", "is not member of", "hsa api call failure", "HSA_STATUS_ERROR",
                   "ROCk module is NOT", "Failed to get user name")


def _int_prefix(value: str) -> int | None:
    m = re.match(r"^\s*(\d+)", value)
    return int(m.group(1)) if m else None


def parse_rocminfo(text: str) -> RocminfoReport:
    """rocminfo's agent blocks: '  Name:   gfx1100', '  Node:  1', '  Device Type: GPU', ISA 'Name:' lines."""
    rep = RocminfoReport()
    cur: RocminfoAgent | None = None
    in_isa = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("ROCk module") and "is loaded" in line:
            rep.rock_loaded = True
        if any(p in line for p in _ERROR_PATTERNS):
            rep.errors.append(line[:300])
            if line.startswith("ROCk module is NOT"):
                rep.rock_loaded = False
        if re.match(r"^Agent \d+$", line):
            cur = RocminfoAgent()
            rep.agents.append(cur)
            in_isa = False
            continue
        if cur is None or ":" not in line:
            continue
        if line.startswith("ISA Info"):
            in_isa = True
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if in_isa:
            if key == "Name" and value.startswith("amdgcn"):
                cur.isas.append(value)
            continue
        if key == "Name" and not cur.name:
            cur.name = value
        elif key == "Marketing Name":
            cur.marketing_name = value
        elif key == "Device Type":
            cur.device_type = value
        elif key == "Node":
            cur.node = _int_prefix(value)
        elif key == "Uuid":
            cur.uuid = value
        elif key == "Chip ID":
            cur.chip_id = _int_prefix(value)
        elif key == "Compute Unit":
            cur.compute_units = _int_prefix(value)
    return rep


def parse_agent_enumerator(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if re.match(r"^gfx[0-9a-f]+$", ln.strip())]


@dataclass
class NvidiaGpu:
    name: str
    driver_version: str
    memory: str = ""
    compute_cap: str = ""
    bus_id: str = ""


def parse_nvidia_smi_csv(text: str) -> list[NvidiaGpu]:
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2 or not parts[0] or not re.match(r"^\d", parts[1]):
            continue
        parts += [""] * (5 - len(parts))
        out.append(NvidiaGpu(parts[0], parts[1], parts[2], parts[3], parts[4]))
    return out


def parse_nvidia_proc_version(text: str) -> str | None:
    """/proc/driver/nvidia/version: 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  ...'."""
    m = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def parse_amd_smi_static(text: str) -> list[dict[str, str]]:
    """`amd-smi static --asic --json`: a list (or {"gpu_data": [...]}) of {"gpu": n, "asic": {...}}."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return []
    if isinstance(data, dict):
        data = data.get("gpu_data", [data])
    out = []
    if isinstance(data, list):
        for item in data:
            asic = item.get("asic") if isinstance(item, dict) else None
            if isinstance(asic, dict):
                out.append({k: str(v) for k, v in asic.items()})
    return out


def parse_rocm_version(text: str) -> str | None:
    """`.info/version`: 'X.Y.Z' or 'X.Y.Z-NNN' (rocm-core CMakeLists.txt)."""
    m = re.match(r"^\s*(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None
