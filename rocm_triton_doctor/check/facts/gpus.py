"""The AMD GPUs as ROCm sees them: KFD topology nodes (real gfx), HSA overrides (effective gfx), names.

KFD is the source of truth; rocminfo is the fallback when the snapshot has no KFD files (its gfx already includes
any override, rocm-facts §5.5).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, found, safe, unknown
from rocm_triton_doctor.check.facts.rocminfo import RocminfoReport


@dataclass(frozen=True)
class Gpu:
    """One AMD GPU as ROCm sees it. `gfx` is the REAL target (KFD); `effective_gfx` applies HSA overrides."""

    node: int | None
    gfx: str | None
    effective_gfx: str | None
    override: str | None  # the override value that applies to this node, verbatim
    override_var: str | None  # which variable set it
    device_id: int | None
    name: str
    vram_bytes: int | None
    compute_units: int | None
    wave_size: int | None
    render_minor: int | None
    integrated: bool | None
    source: str
    info: knowledge.GfxTarget | None = None

    @property
    def label(self) -> str:
        where = f"node {self.node}" if self.node is not None else "GPU"
        return f"{where}: {self.name or 'unknown GPU'} ({self.gfx or 'gfx?'})"


# -- parsers ----------------------------------------------------------------------------------------------------

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


# -- builders ---------------------------------------------------------------------------------------------------

OVERRIDE_VAR = "HSA_OVERRIDE_GFX_VERSION"
# The source of a rocminfo GPU whose override was read from its agent name and chip id, not from the environment.
INFERRED_OVERRIDE = "rocminfo, override inferred"


class GpuFacts(TypedDict):
    gpus: Fact[tuple[Gpu, ...]]


def build(snap: Mapping[str, Any], env: Fact[dict[str, str]], rocminfo: Fact[RocminfoReport]) -> GpuFacts:
    return GpuFacts(gpus=safe("/sys/class/kfd", lambda: _gpus(snap, env, rocminfo)))


def _overrides(env: Fact[dict[str, str]]) -> dict[str, str]:
    if not env.found or not env.value:
        return {}
    return {k: v for k, v in env.value.items() if k == "HSA_OVERRIDE_GFX_VERSION"
            or k.startswith("HSA_OVERRIDE_GFX_VERSION_")}


def _apply_override(node: int | None, real: str | None, env: Fact[dict[str, str]]) -> tuple[str | None, str | None, str | None]:
    """(effective gfx, value, variable) for a KFD node. Per-node beats global (libhsakmt topology.c)."""
    ov = _overrides(env)
    var = None
    if node is not None and f"HSA_OVERRIDE_GFX_VERSION_{node}" in ov:
        var = f"HSA_OVERRIDE_GFX_VERSION_{node}"
    elif "HSA_OVERRIDE_GFX_VERSION" in ov:
        var = "HSA_OVERRIDE_GFX_VERSION"
    if var is None:
        return real, None, None
    value = ov[var]
    gfx, _why = knowledge.parse_override(value)
    return (gfx or real), value, var


KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"


def kfd_nodes_complete(snap: Mapping[str, Any]) -> bool:
    """The snapshot lists the KFD node directory (the live probe records it) and holds the properties of every node
    listed: then the GPU nodes it shows are all there are. Without that, a paste of some nodes, or a snapshot that
    lost a node's files, says nothing about the nodes it does not show."""
    listing = snapshot.path(snap, KFD_NODES)
    entries = listing.value.get("entries") if listing.found and listing.value else None
    raw = snap.get("files")
    files: dict[str, Any] = raw if isinstance(raw, dict) else {}
    read = {m.group(1) for p in files if (m := re.match(r"^/sys/class/kfd/kfd/topology/nodes/(\d+)/properties$", p))
            and files[p] is not None}
    return isinstance(entries, list) and bool(entries) and {str(e) for e in entries} <= read


def _gpus(snap: Mapping[str, Any], env: Fact[dict[str, str]], rocminfo: Fact[RocminfoReport]) -> Fact[tuple[Gpu, ...]]:
    files = snap.get("files") if isinstance(snap.get("files"), dict) else None
    prop_paths = sorted((p for p in (files or {}) if re.match(r"^/sys/class/kfd/kfd/topology/nodes/\d+/properties$", p)),
                        key=lambda p: int(p.split("/")[-2]))
    rocminfo_by_node = {}
    if rocminfo.value is not None:
        rocminfo_by_node = {a.node: a for a in rocminfo.value.gpus if a.node is not None}
    evidenced = {int(m.group(1)) for p in (files or {}) if (m := re.match(r"^/sys/class/kfd/kfd/topology/nodes/(\d+)/", p))}
    if prop_paths and evidenced - {int(p.split("/")[-2]) for p in prop_paths}:
        # A node the snapshot shows (gpu_id, name, mem_banks) without its properties: the list is incomplete, and
        # counting GPUs from it would be a guess.
        return unknown("/sys/class/kfd/kfd/topology/nodes/*/properties")
    if prop_paths:
        gpus = []
        for p in prop_paths:
            f = snapshot.file(snap, p)
            if not f.found:
                continue
            props = parse_kfd_properties(f.value or "")
            if props.get("simd_count", 0) <= 0:
                continue  # CPU node (kfd_topology.c: GPU nodes have SIMDs)
            node = int(p.split("/")[-2])
            gtv = props.get("gfx_target_version")
            real = knowledge.gfx_from_target_version(gtv) if gtv else None
            info = knowledge.gfx_info(real) or (knowledge.pci_lookup(props["device_id"]) if props.get("device_id") else None)
            if real is None and info is not None:
                real = info.gfx
            eff, value, var = _apply_override(node, real, env)
            vram = None
            base = p.rsplit("/", 1)[0]
            for mp in sorted(k for k in (files or {}) if k.startswith(base + "/mem_banks/") and k.endswith("/properties")):
                mb = snapshot.file(snap, mp)
                if mb.found:
                    mprops = parse_kfd_properties(mb.value or "")
                    vram = (vram or 0) + mprops.get("size_in_bytes", 0)
            ra = rocminfo_by_node.get(node)
            name = (ra.marketing_name if ra and ra.marketing_name else "") or _generic_name(info, props.get("device_id"))
            simd_per_cu = props.get("simd_per_cu") or 0
            cus = props["simd_count"] // simd_per_cu if simd_per_cu else (ra.compute_units if ra else None)
            gpus.append(Gpu(node, real, eff, value, var, props.get("device_id"), name, vram, cus,
                            props.get("wave_front_size") or (info.wave_size if info else None),
                            props.get("drm_render_minor"), info.integrated if info else None, p, info))
        gpus = _name_from_runtime(gpus, snap.get("runtime"), env)
        if gpus:
            return found(tuple(gpus), "/sys/class/kfd/kfd/topology/nodes")
        # Only CPU nodes among the properties read: "KFD has no GPU node" needs the node directory's listing (the
        # live probe records it) with every listed node read; a paste of node 0 alone, or a snapshot that lost the
        # GPU node's files, says nothing about the nodes it does not show (tests/check/test_properties.py).
        # rocminfo enumerates every agent: when it ran cleanly, its GPU agents (or none) complete the picture; its
        # GPUs are taken below.
        ri = rocminfo.value
        if kfd_nodes_complete(snap) or (ri is not None and not ri.errors and not ri.gpus):
            return absent(KFD_NODES)
        if ri is None or not ri.gpus:
            return unknown(f"{KFD_NODES} (only CPU nodes among those read; the node list unknown)")
    # No KFD in the snapshot: fall back to rocminfo (its gfx already includes any override, rocm-facts §5.5).
    if rocminfo.value is not None and rocminfo.value.gpus:
        gpus = []
        for a in rocminfo.value.gpus:
            shown = knowledge.base_gfx(a.name)
            eff, value, var = _apply_override(a.node, shown, env)
            # Under an override rocminfo prints the overridden target: the chip id, else the marketing name, names
            # the real one (rocm-facts §5.5).
            chip = knowledge.pci_lookup(a.chip_id) if a.chip_id else None
            info = (chip or (gfx_for_name(a.marketing_name) if value is not None else None)
                    or knowledge.gfx_info(shown))
            real = info.gfx if (value is not None and info is not None) else shown
            source = "rocminfo"
            if value is None and chip is not None and shown and knowledge.gfx_info(shown) and chip.gfx != shown:
                # No override in the evidence, yet the agent's name is not its chip's target: rocminfo names the target
                # after an override (rocm-facts §5.5), so one was in effect where it ran (ROCm/ROCm#5657: an RX 9060 XT,
                # chip 0x7590 = gfx1200, listed as gfx1100; the reporter did not know it was set).
                real, value, var = chip.gfx, knowledge.override_value(shown), OVERRIDE_VAR
                source = f"{INFERRED_OVERRIDE} (chip 0x{a.chip_id:04x} is {chip.gfx}, the agent is named {shown})"
            gpus.append(Gpu(a.node, real, shown, value, var, a.chip_id, a.marketing_name, None, a.compute_units,
                            info.wave_size if info else None, None, info.integrated if info else None, source, info))
        return found(tuple(gpus), "rocminfo")
    seen = _from_seen(snap, env)
    if seen:
        return found(seen, seen[0].source)
    kfd_dir = snapshot.path(snap, "/sys/class/kfd")
    sysprops_absent = files is not None and files.get("/sys/class/kfd/kfd/topology/system_properties", "") is None
    if sysprops_absent or kfd_dir.status is Status.ABSENT:
        return absent("/sys/class/kfd")
    return unknown("/sys/class/kfd/kfd/topology/nodes")


def _generic_name(info: knowledge.GfxTarget | None, device_id: int | None) -> str:
    """A name from the knowledge base when no tool reported a marketing name: chip + the products it covers."""
    if info is None:
        return f"AMD GPU 0x{device_id:04x}" if device_id else "AMD GPU"
    products = ", ".join(info.products[:3]) + ("…" if len(info.products) > 3 else "")
    return f"{info.chip}" + (f" ({products})" if products else "")


def _name_from_runtime(gpus: list[Gpu], runtime: Any, env: Fact[dict[str, str]]) -> list[Gpu]:
    """torch's device names, when torch saw exactly these GPUs in KFD order (no visibility filter)."""
    if not isinstance(runtime, dict) or not isinstance(runtime.get("devices"), list):
        return gpus
    names = [str(d.get("name") or "") for d in runtime["devices"] if isinstance(d, dict)]
    hidden = env.found and env.value and any(env.value.get(v) for v in
                                             ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"))
    if hidden or len(names) != len(gpus) or not all(names):
        return gpus
    return [g if g.source == "rocminfo" or "(" not in g.name and g.name.startswith(("AMD", "Radeon"))
            else dataclasses.replace(g, name=n) for g, n in zip(gpus, names)]


# -- GPUs named by other tools (pasted text): `gpus_seen`, torch's devices ---------------------------------------

# Tools that read the chip itself (PCI ids, KFD sysfs, Mesa): the REAL gfx even under HSA_OVERRIDE_GFX_VERSION.
# The others ask the HSA/HIP runtime, which reports the overridden target (rocm-facts §5.5).
REAL_GFX_TOOLS = ("lspci", "rocm-smi", "amd-smi", "ollama", "vulkaninfo", "kfd", "node-labeller")


def shows_effective_gfx(g: Gpu) -> bool:
    """The GPU's target was read from the runtime (rocminfo, torch's gcnArchName, rocBLAS, HIP's log, …), which
    reports it AFTER any HSA_OVERRIDE_GFX_VERSION: the target kernels run as, whatever the unrecorded environment.
    False for the chip's own id (KFD sysfs, lspci, amd-smi, …), which an override does not change."""
    tool = g.source.split(" (", 1)[0]
    return tool not in REAL_GFX_TOOLS and not tool.startswith("/sys/") and tool != "text"


# The marketing name AMD gives APU graphics without a model number (amdgpu.ids: Renoir, Cezanne, Raphael, Granite
# Ridge iGPUs); every discrete Radeon/Instinct product carries its model. Such a GPU is an iGPU even when its gfx is
# not shown (TheRock#5543: torch listing 'AMD Radeon(TM) Graphics' as cuda:0 beside an RX 7900 XT).
GENERIC_IGPU_NAME = re.compile(r"^\s*AMD Radeon(?:\(TM\))? Graphics\s*$")


def _norm(text: str) -> str:
    # Windows' and the issue forms' `AMD Radeon (TM) Pro WX 5100 Graphics`: the trademark sign is not part of the name
    text = re.sub(r"\((?:TM|R)\)|[™®]", " ", text, flags=re.I)
    return " " + re.sub(r"[^a-z0-9+]+", " ", text.lower()).strip() + " "


def _unique_codenames() -> frozenset[str]:
    """One-word chip codenames that name exactly one target (lspci's `[AMD/ATI] Barcelo`, `Renoir`, `Rembrandt`):
    at least 6 letters and not a product prefix (MI300 is also MI300X's), so a word cannot match two targets."""
    seen: dict[str, int] = {}
    for gfx in knowledge.all_gfx():
        t = knowledge.gfx_info(gfx)
        for c in (t.chip.split(" / ") if t else ()):
            if " " not in c:
                seen[c] = seen.get(c, 0) + 1
    return frozenset(c for c, n in seen.items() if n == 1 and len(c) >= 6 and c.isalpha())


_UNIQUE_CODENAMES = _unique_codenames()


def gfx_for_name(name: str | None) -> knowledge.GfxTarget | None:
    """A GPU name as tools print it ('AMD Radeon RX 6700 XT', lspci's 'Navi 22 [Radeon RX 6700/6700 XT …]') -> its
    target, from the product and chip names in knowledge/data/gfx.json. Generic names ('AMD Radeon Graphics') and
    names that match two targets give None: never guess the hardware."""
    if not name:
        return None
    m = re.search(r"\b(?:Device|0x|1002:)\s*([0-9a-fA-F]{4})\b", name)  # torch/rocm-smi print 'Device 66a1' for unnamed chips
    if m and knowledge.pci_lookup("0x" + m.group(1).lower()):
        return knowledge.pci_lookup("0x" + m.group(1).lower())
    text = _norm(name)
    best: tuple[int, set[str]] = (0, set())
    for gfx in knowledge.all_gfx():
        t = knowledge.gfx_info(gfx)
        if t is None:
            continue
        products = [p.replace("(XT)", "") for p in t.products]
        # Also without "Radeon ": an issue form's `RX 7600 XT` (invoke-ai/InvokeAI#7574) names the product too.
        keys = products + [p[len("Radeon "):] for p in products if p.startswith("Radeon RX ")] + [
            c for c in t.chip.split(" / ") if " " in c or c in _UNIQUE_CODENAMES]
        for k in keys:
            nk = _norm(k)
            if len(nk.strip()) < 6 or "apu graphics" in nk or "igpu" in nk:
                continue
            if nk in text:
                n = len(nk)
                if n > best[0]:
                    best = (n, {gfx})
                elif n == best[0]:
                    best[1].add(gfx)
    return knowledge.gfx_info(next(iter(best[1]))) if len(best[1]) == 1 else None


def _seen_entries(snap: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = [e for e in snap.get("gpus_seen") or () if isinstance(e, dict)]
    rt = snap.get("runtime")
    devices = rt.get("devices") if isinstance(rt, dict) else None
    for d in devices if isinstance(devices, list) else ():
        if isinstance(d, dict) and (d.get("gcnArchName") or d.get("name")):
            out.append({"tool": "torch", "gfx": d.get("gcnArchName"), "name": d.get("name"), "index": d.get("index")})
    return out


def _from_seen(snap: Mapping[str, Any], env: Fact[dict[str, str]]) -> tuple[Gpu, ...]:
    """The GPUs of the one tool that identifies the most of them (a tool's own numbering keeps two identical GPUs
    apart; two tools describing one GPU are not two GPUs). Each Gpu's `source` names the tool."""
    by_tool: dict[str, list[tuple[Gpu, Any, bool]]] = {}  # per tool: (GPU, its index in the tool's numbering, named)
    for e in _seen_entries(snap):
        tool = str(e.get("tool") or "text")
        shown = knowledge.base_gfx(str(e.get("gfx") or "")) or None
        pci = str(e.get("pci_id") or "")
        info = (knowledge.pci_lookup("0x" + pci.split(":")[-1]) if pci else None) or gfx_for_name(e.get("name"))
        if shown and knowledge.gfx_info(shown) is None and not re.match(r"^gfx\d+[0-9a-f]{2}$", shown):
            shown = None
        if tool in REAL_GFX_TOOLS or not shown:
            real = shown or (info.gfx if info else None)
            eff, value, var = _apply_override(None, real, env)
        else:  # the runtime's view: already overridden; the name (if any) tells the real chip
            ovs = _overrides(env)
            value = ovs.get("HSA_OVERRIDE_GFX_VERSION")
            var = "HSA_OVERRIDE_GFX_VERSION" if value is not None else None
            forced = knowledge.parse_override(value)[0] if value else None
            if forced and shown != forced:
                # The tool shows a target other than the override's, so it ran without it (a separate command, as
                # `rocminfo` beside a launcher line that sets it): what it shows is the chip itself.
                real, eff = shown, forced
            else:
                real = info.gfx if (info and value is not None) else shown
                eff = shown
        info = knowledge.gfx_info(real) or info
        name = str(e.get("name") or "")
        integrated = info.integrated if info else (True if GENERIC_IGPU_NAME.match(name) else None)
        gpu = Gpu(None, real, eff, value, var, int(pci.split(":")[-1], 16) if pci else None,
                  name or (_generic_name(info, None) if info else ""), None, None,
                  info.wave_size if info else None, None, integrated, f"{tool} (pasted text)", info)
        _merge_seen(by_tool.setdefault(tool, []), gpu, e.get("index"), bool(name))
    lists = [[g for g, _, _ in rows] for rows in by_tool.values()]
    # On a tie a tool's own report beats a target only mentioned in text (vllm#8788: collect_env's `AMD Radeon
    # Graphics (gfx1103)` beside `gfx1103` in a platform string), so deleting the mention never changes the GPU's source.
    ranked = sorted(lists, key=lambda rows: (sum(bool(g.gfx) for g in rows), len(rows),
                                             not rows or not rows[0].source.startswith("text ")), reverse=True)
    best = [g for g in ranked[0] if g.gfx or g.name] if ranked else []
    if not any(g.gfx for g in best):
        return ()
    return tuple(best + _other_kind(best, ranked[1:], env))


def _merge_seen(rows: list[tuple[Gpu, Any, bool]], gpu: Gpu, index: Any, named: bool) -> None:
    """Add one tool's mention of a GPU to that tool's rows (GPU, index in the tool's numbering or None, whether the tool
    named it), unless it is a GPU already there. Two numbered devices stay two (identical cards); otherwise:
    * the same target and name again is the same GPU: an unnumbered `GPU: AMD Radeon AI PRO R9700` line beside torch's
      device 0 of that name (amd/playbooks#172) had counted as a second GPU torch did not see;
    * a target line without a name (ComfyUI's `AMD arch: gfx1201`) and a named device of that target
      (`Device: cuda:0 AMD Radeon AI PRO R9700`) are one GPU, and the named one stays (ComfyUI-Docker#171)."""
    if any(g.gfx == gpu.gfx and g.name == gpu.name and (index is None or i is None) for g, i, _ in rows):
        return
    same = [k for k, (g, i, _) in enumerate(rows) if g.gfx == gpu.gfx and (index is None or i is None or i == index)]
    if gpu.gfx and same and not named:
        return
    bare = [k for k in same if not rows[k][2]]
    if gpu.gfx and named and bare:
        rows[bare[0]] = (gpu, index, True)
        return
    rows.append((gpu, index, named))


def _other_kind(best: list[Gpu], others: list[list[Gpu]], env: Fact[dict[str, str]]) -> list[Gpu]:
    """GPUs another tool saw that cannot be one of `best`'s: an integrated GPU where `best` has only discrete ones, or
    the reverse (comfyui-rocm#115: the launcher's detector named the RX 9060 XT, gfx1200, while ComfyUI's torch line
    said `AMD arch: gfx1036`, the Ryzen's iGPU). A discrete target from a tool that asks the runtime is left out (an
    HSA override makes the runtime report an iGPU as gfx1030 or gfx1100), and so is everything while an override is
    in the evidence: then one GPU can show two targets."""
    kinds = {g.integrated for g in best if g.integrated is not None}
    if len(kinds) != 1 or _overrides(env) or (False in kinds and any(_runtime_view(g) for g in best)):
        return []
    out: list[Gpu] = []
    for rows in others:
        for g in rows:
            if (g.gfx and g.integrated is not None and g.integrated not in kinds
                    and (g.integrated or not _runtime_view(g)) and all(o.gfx != g.gfx for o in best + out)):
                out.append(g)
    return out


def _runtime_view(g: Gpu) -> bool:
    """The GPU's target came from a tool that asks the runtime (what an HSA override changes)."""
    return g.source.split(" (", 1)[0] not in REAL_GFX_TOOLS + ("text",)
