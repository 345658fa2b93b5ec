"""What ROCm's own tools report: rocminfo's HSA agents and rocm_agent_enumerator's gfx list."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, error, found, safe


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
    # `ROCk module version 6.16.13 is loaded`: rocminfo prints a version only when /sys/module/amdgpu/version exists,
    # i.e. for AMD's out-of-tree amdgpu-dkms driver; the kernel's own amdgpu gives `ROCk module is loaded`.
    rock_version: str | None = None
    errors: list[str] = field(default_factory=list)  # lines that say what went wrong (permission, HSA errors)

    @property
    def gpus(self) -> list[RocminfoAgent]:
        # An excerpt may leave out `Device Type:`; an agent named gfxN is a GPU agent all the same (CPU agents carry
        # the CPU's name, NPU agents aie2: legacy-rocm-build#6484 pasted `Name: gfx1201` / `Marketing Name:` only).
        return [a for a in self.agents if a.device_type.upper() == "GPU"
                or (not a.device_type and re.match(r"gfx[0-9a-f]{3,4}$", a.name) is not None)]


# -- parsers (formats checked against the captures in tests/fixtures/text) ------------------------------------

_ERROR_PATTERNS = ("Unable to open /dev/kfd", "is not member of", "hsa api call failure", "HSA_STATUS_ERROR",
                   "ROCk module is NOT", "Failed to get user name",
                   # rocminfo itself died (WSL's thunk asserting on a second, non-AMD adapter: legacy-rocm-build#4584)
                   "Assertion `", "Aborted (core dumped)", "Segmentation fault")


def _int_prefix(value: str) -> int | None:
    m = re.match(r"^\s*(\d+)", value)
    return int(m.group(1)) if m else None


def parse_rocminfo(text: str) -> RocminfoReport:
    """rocminfo's agent blocks: '  Name:   gfx1100', '  Node:  1', '  Device Type: GPU', ISA 'Name:' lines."""
    rep = RocminfoReport()
    cur: RocminfoAgent | None = None
    in_isa = False
    # An agent excerpt pasted without its `Agent N` header (aiter#3139: `Name: gfx942` … `Device Type: GPU`) is still
    # rocminfo's agent block: its first `Name:` opens an agent when the text carries rocminfo's own agent keys
    # (a `pip show` also prints `Name:`, never `Device Type:` or `Marketing Name:`).
    headerless = not re.search(r"^\s*Agent \d+\s*$", text, re.M) and bool(re.search(r"^\s*(?:Device Type|Marketing Name):",
                                                                                   text, re.M))
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("ROCk module") and "is loaded" in line:
            rep.rock_loaded = True
            m = re.match(r"ROCk module version (\d+\.\d+\.\d+) is loaded", line)
            rep.rock_version = m.group(1) if m else rep.rock_version
        if any(p in line for p in _ERROR_PATTERNS):
            rep.errors.append(line[:300])
            if line.startswith("ROCk module is NOT"):
                rep.rock_loaded = False
        if re.match(r"^Agent \d+$", line):
            cur = RocminfoAgent()
            rep.agents.append(cur)
            in_isa = False
            continue
        # one `Name:` per agent (ISA names are amdgcn-…): the CPU's and an NPU's (`Name: aie2p` / `Marketing Name:
        # RyzenAI-npu5`, amdgpu#209) open agents of their own, or their marketing name would land on the GPU before
        if headerless and re.match(r"^Name:\s*(?!amdgcn-)\S", line):
            cur = RocminfoAgent()
            rep.agents.append(cur)
            in_isa = False
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


# -- builders ---------------------------------------------------------------------------------------------------

class RocminfoFacts(TypedDict):
    rocminfo: Fact[RocminfoReport]
    agent_enumerator: Fact[tuple[str, ...]]


def build(snap: Mapping[str, Any]) -> RocminfoFacts:
    enum = snapshot.command(snap, "rocm_agent_enumerator")
    return RocminfoFacts(
        rocminfo=safe("rocminfo", lambda: _rocminfo(snap)),
        agent_enumerator=(found(tuple(parse_agent_enumerator(enum.value.stdout)), enum.source)
                          if enum.found and enum.value is not None else Fact(enum.status, None, enum.source)),
    )


def _rocminfo(snap: Mapping[str, Any]) -> Fact[RocminfoReport]:
    c = snapshot.command(snap, "rocminfo")
    if not c.found or c.value is None:
        return Fact(c.status, None, c.source, c.error)
    run = c.value
    if run.timed_out:
        return error(c.source, "timed out")
    rep = parse_rocminfo(run.stdout + "\n" + run.stderr)
    if not rep.agents and (run.returncode not in (0, None) or rep.errors):
        msg = rep.errors[0] if rep.errors else f"exit code {run.returncode}"
        return Fact(Status.ERROR, rep, c.source, msg)
    if not rep.agents:
        return error(c.source, "no HSA agents in output")
    return found(rep, c.source)
