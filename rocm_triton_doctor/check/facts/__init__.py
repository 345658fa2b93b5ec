"""Facts: typed, parsed views of a snapshot (DESIGN §2). Pure: a snapshot in, frozen dataclasses out.

Every fact knows its status (found / absent / error / unknown / not-applicable) and its source. `unknown` means the
snapshot did not record it (a partial snapshot written from a forum post): checks must `skip`, never guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.facts import parsers

T = TypeVar("T")


class Status(str, Enum):
    FOUND = "found"
    ABSENT = "absent"
    ERROR = "error"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Fact(Generic[T]):
    status: Status
    value: T | None = None
    source: str = ""
    error: str = ""

    @property
    def found(self) -> bool:
        return self.status is Status.FOUND

    @property
    def known(self) -> bool:
        return self.status in (Status.FOUND, Status.ABSENT)

    def describe(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return f"{self.status.value}{where}" + (f": {self.error}" if self.error else "")


def found(value: T, source: str = "") -> Fact[T]:
    return Fact(Status.FOUND, value, source)


def absent(source: str = "") -> Fact[Any]:
    return Fact(Status.ABSENT, None, source)


def unknown(source: str = "") -> Fact[Any]:
    return Fact(Status.UNKNOWN, None, source)


def error(source: str, message: str) -> Fact[Any]:
    return Fact(Status.ERROR, None, source, message)


# -- value types ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OsInfo:
    id: str
    version_id: str
    pretty_name: str
    id_like: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeviceNode:
    path: str
    mode: int | None
    owner: str | None
    group: str | None
    readable: bool | None  # None: not measured (snapshot written by hand, or --root)
    writable: bool | None

    @property
    def perms(self) -> str:
        return oct(self.mode & 0o777)[2:].rjust(4, "0") if self.mode is not None else "?"

    @property
    def world_rw(self) -> bool:
        return self.mode is not None and (self.mode & 0o006) == 0o006

    @property
    def group_rw(self) -> bool:
        return self.mode is not None and (self.mode & 0o060) == 0o060


@dataclass(frozen=True)
class User:
    name: str
    uid: int | None
    groups: tuple[str, ...]
    groups_configured: tuple[str, ...] | None


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


@dataclass(frozen=True)
class RocmInstall:
    version: str | None
    path: str
    versions: tuple[tuple[str, str], ...]  # (prefix, version) for every /opt/rocm-* found
    link_target: str | None


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    requires: tuple[str, ...]
    location: str = ""

    @property
    def local(self) -> str:
        return self.version.split("+", 1)[1] if "+" in self.version else ""

    def pinned(self, names: set[str]) -> tuple[str, str] | None:
        """The (distribution, specifier) this one requires among `names`, ignoring extras-only requirements."""
        from packaging.requirements import InvalidRequirement, Requirement

        for req_text in self.requires:
            try:
                req = Requirement(req_text)
            except InvalidRequirement:
                continue
            if req.marker is not None and "extra" in str(req.marker):
                continue
            if req.marker is not None:
                try:
                    if not req.marker.evaluate():
                        continue
                except Exception:  # noqa: BLE001 - a marker we cannot evaluate: keep the requirement
                    pass
            key = norm_name(req.name)
            if key in names:
                return key, str(req.specifier)
        return None


@dataclass(frozen=True)
class PythonEnv:
    executable: str
    version: str
    virtualenv: bool | None
    conda: bool | None
    externally_managed: bool | None
    python_h: bool | None
    include_dir: str
    distributions: Mapping[str, Distribution]
    triton_owners: tuple[str, ...]

    def dist(self, name: str) -> Distribution | None:
        return self.distributions.get(norm_name(name))


@dataclass(frozen=True)
class RuntimeDevice:
    index: int
    name: str
    gcn_arch: str | None
    capability: tuple[int, ...]
    total_memory: int | None


@dataclass(frozen=True)
class Runtime:
    torch_version: str | None
    hip_version: str | None
    cuda_version: str | None
    is_available: bool | None
    devices: tuple[RuntimeDevice, ...]
    arch_list: tuple[str, ...] | None
    triton_version: str | None
    triton_backend: str | None
    triton_arch: str | None
    triton_error: str | None
    error: str | None
    torch_import_failed: bool = False
    timed_out: bool = False

    @property
    def build(self) -> str:
        """rocm | cuda | cpu | unknown, from torch.version.{hip,cuda}."""
        if self.torch_version is None:
            return "unknown"
        if self.hip_version:
            return "rocm"
        if self.cuda_version:
            return "cuda"
        return "cpu"


@dataclass(frozen=True)
class NvidiaInfo:
    driver_version: str | None
    gpus: tuple[parsers.NvidiaGpu, ...]


@dataclass(frozen=True)
class PciDevice:
    address: str
    vendor: int
    device: int
    pci_class: int

    @property
    def is_amd(self) -> bool:
        return self.vendor == 0x1002

    @property
    def is_nvidia(self) -> bool:
        return self.vendor == 0x10DE


@dataclass(frozen=True)
class CommandRun:
    name: str
    argv: tuple[str, ...]
    returncode: int | None
    timed_out: bool
    missing: bool
    error: str | None
    stdout: str
    stderr: str


# -- the facts bundle -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Facts:
    os: Fact[OsInfo]
    kernel_release: Fact[str]
    kernel_config: Fact[dict[str, str]]
    wsl: Fact[bool]
    container: Fact[str]
    amdgpu_initstate: Fact[str]
    amdgpu_version: Fact[str]
    kfd_topology: Fact[int]  # number of KFD nodes (CPU + GPU)
    gpus: Fact[tuple[Gpu, ...]]
    dev_kfd: Fact[DeviceNode]
    render_nodes: Fact[tuple[DeviceNode, ...]]
    dev_dxg: Fact[bool]
    user: Fact[User]
    rocm: Fact[RocmInstall]
    rocminfo: Fact[parsers.RocminfoReport]
    agent_enumerator: Fact[tuple[str, ...]]
    nvidia: Fact[NvidiaInfo]
    env: Fact[dict[str, str]]
    python: Fact[PythonEnv]
    runtime: Fact[Runtime]
    which: Fact[dict[str, str | None]]
    pci_display: Fact[tuple[PciDevice, ...]] = field(default_factory=lambda: unknown("/sys/bus/pci"))
    codeobjects: Fact[Any] = field(default_factory=lambda: unknown("codeobjects"))  # facts/codeobjects.CodeObjects
    commands: tuple[CommandRun, ...] = ()
    probe_errors: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def env_var(self, name: str) -> str | None:
        return self.env.value.get(name) if self.env.found and self.env.value else None

    @property
    def amd_gpus_present(self) -> bool | None:
        """True/False when we can tell, None when the snapshot does not say."""
        if self.gpus.found:
            return bool(self.gpus.value)
        if self.gpus.status is Status.ABSENT:
            return False
        return None

    @property
    def pci_amd_gpus(self) -> tuple[PciDevice, ...]:
        return tuple(d for d in (self.pci_display.value or ()) if d.is_amd) if self.pci_display.found else ()

    @property
    def nvidia_gpus_present(self) -> bool:
        return bool(self.nvidia.found and self.nvidia.value and self.nvidia.value.gpus)


def norm_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# -- builders -------------------------------------------------------------------------------------------------

def _file(snap: Mapping[str, Any], path: str) -> Fact[str]:
    files = snap.get("files")
    if not isinstance(files, dict) or path not in files:
        return unknown(path)
    v = files[path]
    if v is None:
        return absent(path)
    if isinstance(v, dict) and "error" in v:
        return error(path, str(v["error"]))
    if not isinstance(v, str):
        return error(path, f"unexpected value of type {type(v).__name__}")
    return found(v, path)


def _path(snap: Mapping[str, Any], path: str) -> Fact[dict[str, Any]]:
    paths = snap.get("paths")
    if not isinstance(paths, dict) or path not in paths:
        return unknown(path)
    v = paths[path]
    if v is None or (isinstance(v, dict) and v.get("exists") is False):
        return absent(path)
    if not isinstance(v, dict):
        return error(path, f"unexpected value of type {type(v).__name__}")
    return found(v, path)


def _safe(source: str, fn: Callable[[], Fact[T]]) -> Fact[T]:
    """A parser that trips on garbage gives an `error` fact, never a traceback."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return error(source, f"could not parse: {type(exc).__name__}: {exc}")


def _os(snap: Mapping[str, Any]) -> Fact[OsInfo]:
    f = _file(snap, "/etc/os-release")
    if not f.found:
        alt = _file(snap, "/usr/lib/os-release")
        if alt.found:
            f = alt
    if not f.found:
        return Fact(f.status, None, f.source, f.error)
    kv = parsers.parse_key_value(f.value or "")
    if "ID" not in kv:
        return error(f.source, "no ID= line")
    return found(OsInfo(kv.get("ID", "").lower(), kv.get("VERSION_ID", ""), kv.get("PRETTY_NAME", kv.get("NAME", "")),
                        tuple(kv.get("ID_LIKE", "").split())), f.source)


def _kernel_release(snap: Mapping[str, Any]) -> Fact[str]:
    f = _file(snap, "/proc/sys/kernel/osrelease")
    if f.found and (f.value or "").strip():
        return found((f.value or "").strip(), f.source)
    pv = _file(snap, "/proc/version")
    if pv.found:
        m = re.search(r"Linux version (\S+)", pv.value or "")
        if m:
            return found(m.group(1), pv.source)
        return error(pv.source, "no 'Linux version' in /proc/version")
    return Fact(f.status if f.status is not Status.FOUND else Status.UNKNOWN, None, f.source, f.error)


def _kernel_config(snap: Mapping[str, Any], release: Fact[str]) -> Fact[dict[str, str]]:
    if not release.found:
        return unknown("/boot/config-<release>")
    f = _file(snap, f"/boot/config-{release.value}")
    if not f.found:
        return Fact(f.status, None, f.source, f.error)
    return found(parsers.parse_kernel_config(f.value or ""), f.source)


def _wsl(snap: Mapping[str, Any]) -> Fact[bool]:
    pv, rel = _file(snap, "/proc/version"), _file(snap, "/proc/sys/kernel/osrelease")
    if not (pv.found or rel.found):
        return unknown("/proc/version")
    dxg = _path(snap, "/dev/dxg")
    return found(parsers.is_wsl(pv.value, rel.value) or dxg.found, "/proc/version")


def _container(snap: Mapping[str, Any]) -> Fact[str]:
    cg, denv, cenv = _file(snap, "/proc/1/cgroup"), _path(snap, "/.dockerenv"), _file(snap, "/run/.containerenv")
    if not (cg.known or denv.known or cenv.known):
        return unknown("/proc/1/cgroup")
    kind = parsers.container_from(cg.value, denv.found, cenv.value if cenv.found else None)
    return found(kind, "/proc/1/cgroup, /.dockerenv, /run/.containerenv") if kind else absent("/proc/1/cgroup")


def _device(snap: Mapping[str, Any], path: str) -> Fact[DeviceNode]:
    p = _path(snap, path)
    if not p.found:
        return Fact(p.status, None, p.source, p.error)
    v = p.value or {}
    if "error" in v:
        return error(path, str(v["error"]))
    mode = v.get("mode")
    try:
        mode_int = int(mode, 8) if isinstance(mode, str) else (int(mode) if mode is not None else None)
    except ValueError:
        mode_int = None
    return found(DeviceNode(path, mode_int, v.get("owner"), v.get("group"), v.get("readable"), v.get("writable")), path)


def _render_nodes(snap: Mapping[str, Any]) -> Fact[tuple[DeviceNode, ...]]:
    paths = snap.get("paths")
    if not isinstance(paths, dict):
        return unknown("/dev/dri")
    names = sorted(p for p in paths if re.match(r"^/dev/dri/renderD\d+$", p))
    nodes = [d.value for d in (_device(snap, n) for n in names) if d.found and d.value]
    if nodes:
        return found(tuple(nodes), "/dev/dri/renderD*")
    if "/dev/dri" in paths or names:
        return absent("/dev/dri/renderD*")
    return unknown("/dev/dri")


def _user(snap: Mapping[str, Any]) -> Fact[User]:
    u = snap.get("user")
    if not isinstance(u, dict):
        return unknown("user")
    groups = tuple(str(g) for g in u.get("groups", []) or [])
    conf = u.get("groups_configured")
    return found(User(str(u.get("name", "?")), u.get("uid"), groups,
                      tuple(str(g) for g in conf) if isinstance(conf, list) else None), "user")


def _env(snap: Mapping[str, Any]) -> Fact[dict[str, str]]:
    e = snap.get("env")
    if not isinstance(e, dict):
        return unknown("env")
    return found({str(k): str(v) for k, v in e.items() if v is not None}, "env")


def _command(snap: Mapping[str, Any], name: str) -> Fact[CommandRun]:
    cmds = snap.get("commands")
    if not isinstance(cmds, dict) or name not in cmds:
        return unknown(name)
    c = cmds[name]
    if c is None:
        return absent(name)
    if isinstance(c, str):  # hand-written snapshot: just the text a user pasted
        return found(CommandRun(name, (name,), 0, False, False, None, c, ""), name)
    if not isinstance(c, dict):
        return error(name, f"unexpected value of type {type(c).__name__}")
    run = CommandRun(name, tuple(c.get("argv") or (name,)), c.get("returncode"), bool(c.get("timed_out")),
                     bool(c.get("missing")), c.get("error"), str(c.get("stdout") or ""), str(c.get("stderr") or ""))
    if run.missing:
        return absent(name)
    return found(run, " ".join(run.argv))


def _rocminfo(snap: Mapping[str, Any]) -> Fact[parsers.RocminfoReport]:
    c = _command(snap, "rocminfo")
    if not c.found or c.value is None:
        return Fact(c.status, None, c.source, c.error)
    run = c.value
    if run.timed_out:
        return error(c.source, "timed out")
    rep = parsers.parse_rocminfo(run.stdout + "\n" + run.stderr)
    if not rep.agents and (run.returncode not in (0, None) or rep.errors):
        msg = rep.errors[0] if rep.errors else f"exit code {run.returncode}"
        return Fact(Status.ERROR, rep, c.source, msg)
    if not rep.agents:
        return error(c.source, "no HSA agents in output")
    return found(rep, c.source)


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


def _gpus(snap: Mapping[str, Any], env: Fact[dict[str, str]], rocminfo: Fact[parsers.RocminfoReport]) -> Fact[tuple[Gpu, ...]]:
    files = snap.get("files") if isinstance(snap.get("files"), dict) else None
    prop_paths = sorted((p for p in (files or {}) if re.match(r"^/sys/class/kfd/kfd/topology/nodes/\d+/properties$", p)),
                        key=lambda p: int(p.split("/")[-2]))
    rocminfo_by_node = {}
    if rocminfo.value is not None:
        rocminfo_by_node = {a.node: a for a in rocminfo.value.gpus if a.node is not None}
    if prop_paths:
        gpus = []
        for p in prop_paths:
            f = _file(snap, p)
            if not f.found:
                continue
            props = parsers.parse_kfd_properties(f.value or "")
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
                mb = _file(snap, mp)
                if mb.found:
                    mprops = parsers.parse_kfd_properties(mb.value or "")
                    vram = (vram or 0) + mprops.get("size_in_bytes", 0)
            ra = rocminfo_by_node.get(node)
            name = (ra.marketing_name if ra and ra.marketing_name else "") or _generic_name(info, props.get("device_id"))
            simd_per_cu = props.get("simd_per_cu") or 0
            cus = props["simd_count"] // simd_per_cu if simd_per_cu else (ra.compute_units if ra else None)
            gpus.append(Gpu(node, real, eff, value, var, props.get("device_id"), name, vram, cus,
                            props.get("wave_front_size") or (info.wave_size if info else None),
                            props.get("drm_render_minor"), info.integrated if info else None, p, info))
        gpus = _name_from_runtime(gpus, snap.get("runtime"), env)
        return found(tuple(gpus), "/sys/class/kfd/kfd/topology/nodes") if gpus else absent("/sys/class/kfd/kfd/topology/nodes")
    # No KFD in the snapshot: fall back to rocminfo (its gfx already includes any override, rocm-facts §5.5).
    if rocminfo.value is not None and rocminfo.value.gpus:
        gpus = []
        for a in rocminfo.value.gpus:
            shown = knowledge.base_gfx(a.name)
            info = (knowledge.pci_lookup(a.chip_id) if a.chip_id else None) or knowledge.gfx_info(shown)
            eff, value, var = _apply_override(a.node, shown, env)
            real = info.gfx if (value is not None and info is not None) else shown
            gpus.append(Gpu(a.node, real, shown, value, var, a.chip_id, a.marketing_name, None, a.compute_units,
                            info.wave_size if info else None, None, info.integrated if info else None, "rocminfo", info))
        return found(tuple(gpus), "rocminfo")
    kfd_dir = _path(snap, "/sys/class/kfd")
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
    import dataclasses

    if not isinstance(runtime, dict) or not isinstance(runtime.get("devices"), list):
        return gpus
    names = [str(d.get("name") or "") for d in runtime["devices"] if isinstance(d, dict)]
    hidden = env.found and env.value and any(env.value.get(v) for v in
                                             ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"))
    if hidden or len(names) != len(gpus) or not all(names):
        return gpus
    return [g if g.source == "rocminfo" or "(" not in g.name and g.name.startswith(("AMD", "Radeon"))
            else dataclasses.replace(g, name=n) for g, n in zip(gpus, names)]


def _kfd_topology(snap: Mapping[str, Any]) -> Fact[int]:
    files = snap.get("files")
    if not isinstance(files, dict):
        return unknown("/sys/class/kfd")
    nodes = {p.split("/")[7] for p in files if re.match(r"^/sys/class/kfd/kfd/topology/nodes/\d+/", p)}
    if nodes:
        return found(len(nodes), "/sys/class/kfd/kfd/topology/nodes")
    sp = _file(snap, "/sys/class/kfd/kfd/topology/system_properties")
    if sp.status is Status.ABSENT or _path(snap, "/sys/class/kfd").status is Status.ABSENT:
        return absent("/sys/class/kfd")
    return unknown("/sys/class/kfd")


def _rocm(snap: Mapping[str, Any], env: Fact[dict[str, str]]) -> Fact[RocmInstall]:
    files = snap.get("files")
    if not isinstance(files, dict):
        return unknown("/opt/rocm")
    versions = []
    for p in sorted(files):
        m = re.match(r"^(/opt/rocm-[^/]+)/\.info/version$", p)
        if m and isinstance(files[p], str):
            v = parsers.parse_rocm_version(files[p])
            if v:
                versions.append((m.group(1), v))
    link = _path(snap, "/opt/rocm")
    link_target = (link.value or {}).get("link") if link.found else None
    candidates = []
    rocm_path = env.value.get("ROCM_PATH") if env.found and env.value else None
    if rocm_path:
        candidates.append(rocm_path.rstrip("/") + "/.info/version")
    candidates.append("/opt/rocm/.info/version")
    for c in candidates:
        f = _file(snap, c)
        if f.found:
            v = parsers.parse_rocm_version(f.value or "")
            if v:
                return found(RocmInstall(v, c.rsplit("/.info", 1)[0], tuple(versions), link_target), c)
            return error(c, f"unreadable version text {f.value!r:.40}")
    if versions:  # versioned installs without the /opt/rocm link
        prefix, v = max(versions, key=lambda pv: tuple(int(x) for x in pv[1].split(".")))
        return found(RocmInstall(v, prefix, tuple(versions), link_target), prefix)
    f = _file(snap, "/opt/rocm/.info/version")
    if f.status is Status.ABSENT:
        return absent("/opt/rocm/.info/version")
    return Fact(f.status, None, f.source, f.error)


def _nvidia(snap: Mapping[str, Any]) -> Fact[NvidiaInfo]:
    smi = _command(snap, "nvidia-smi")
    proc = _file(snap, "/proc/driver/nvidia/version")
    driver = parsers.parse_nvidia_proc_version(proc.value or "") if proc.found else None
    gpus: tuple[parsers.NvidiaGpu, ...] = ()
    if smi.found and smi.value is not None and not smi.value.timed_out:
        gpus = tuple(parsers.parse_nvidia_smi_csv(smi.value.stdout))
        if gpus and not driver:
            driver = gpus[0].driver_version
    if driver or gpus:
        return found(NvidiaInfo(driver, gpus), "nvidia-smi, /proc/driver/nvidia/version")
    if proc.status is Status.ABSENT and smi.status in (Status.ABSENT, Status.UNKNOWN, Status.FOUND):
        return absent("/proc/driver/nvidia/version")
    if smi.status is Status.ABSENT:
        return absent("nvidia-smi")
    return unknown("nvidia-smi")


def _python(snap: Mapping[str, Any]) -> Fact[PythonEnv]:
    p = snap.get("python")
    if not isinstance(p, dict):
        return unknown("python")
    if p.get("error") and "version" not in p:
        return error("python", str(p["error"]))
    dists = {}
    for name, d in (p.get("distributions") or {}).items():
        if isinstance(d, dict):
            dists[norm_name(name)] = Distribution(norm_name(name), str(d.get("version", "")),
                                                  tuple(str(r) for r in d.get("requires") or ()),
                                                  str(d.get("location") or ""))
        elif isinstance(d, str):  # hand-written: {"torch": "2.7.1+rocm6.3"}
            dists[norm_name(name)] = Distribution(norm_name(name), d, ())
    owners = p.get("triton_owners")
    return found(PythonEnv(str(p.get("executable", "")), str(p.get("version", "")), p.get("virtualenv"),
                           p.get("conda"), p.get("externally_managed"), p.get("python_h"),
                           str(p.get("include_dir") or ""), dists,
                           tuple(norm_name(o) for o in owners) if isinstance(owners, list) else ()), "python")


def _runtime(snap: Mapping[str, Any]) -> Fact[Runtime]:
    r = snap.get("runtime")
    if r is None:
        return unknown("runtime")
    if not isinstance(r, dict):
        return error("runtime", "not an object")
    devices: list[RuntimeDevice] = []
    for d in r.get("devices") or []:
        if isinstance(d, dict):
            cap = d.get("capability") or ()
            devices.append(RuntimeDevice(int(d.get("index", len(devices))), str(d.get("name", "")),
                                         d.get("gcnArchName"), tuple(int(x) for x in cap), d.get("total_memory")))
    arch = r.get("arch_list")
    rt = Runtime(r.get("torch_version"), r.get("hip_version"), r.get("cuda_version"), r.get("is_available"),
                 tuple(devices), tuple(arch) if isinstance(arch, list) else None, r.get("triton_version"),
                 r.get("triton_backend"), r.get("triton_arch"), r.get("triton_error"), r.get("error"),
                 bool(r.get("torch_import_failed")), bool(r.get("timed_out")))
    if rt.timed_out:
        return Fact(Status.ERROR, rt, "runtime probe", str(r.get("error") or "timed out"))
    if rt.torch_version is None and rt.error and not rt.torch_import_failed:
        return Fact(Status.ERROR, rt, "runtime probe", rt.error)
    return found(rt, "runtime probe")


def _commands(snap: Mapping[str, Any]) -> tuple[CommandRun, ...]:
    cmds = snap.get("commands")
    if not isinstance(cmds, dict):
        return ()
    out = []
    for name in cmds:
        c = _command(snap, name)
        if c.found and c.value is not None:
            out.append(c.value)
    return tuple(out)


def _pci(snap: Mapping[str, Any]) -> Fact[tuple[PciDevice, ...]]:
    files = snap.get("files")
    if not isinstance(files, dict):
        return unknown("/sys/bus/pci/devices")
    out = []
    for p in sorted(files):
        m = re.match(r"^/sys/bus/pci/devices/([^/]+)/class$", p)
        if not m or not isinstance(files[p], str):
            continue
        base = p.rsplit("/", 1)[0]
        try:
            vendor = int(str(files.get(base + "/vendor") or "").strip(), 16)
            device = int(str(files.get(base + "/device") or "").strip(), 16)
            cls = int(files[p].strip(), 16)
        except ValueError:
            continue
        out.append(PciDevice(m.group(1), vendor, device, cls))
    if out or _path(snap, "/sys/bus/pci/devices").found:
        return found(tuple(out), "/sys/bus/pci/devices")
    return unknown("/sys/bus/pci/devices")


def build_facts(snap: Mapping[str, Any]) -> Facts:
    from rocm_triton_doctor.check.facts.codeobjects import codeobjects_fact  # imports this module: here, not on top
    env = _safe("env", lambda: _env(snap))
    release = _safe("/proc/sys/kernel/osrelease", lambda: _kernel_release(snap))
    rocminfo = _safe("rocminfo", lambda: _rocminfo(snap))
    agent_enum = _command(snap, "rocm_agent_enumerator")
    which = snap.get("which")
    initstate = _file(snap, "/sys/module/amdgpu/initstate")
    return Facts(
        os=_safe("/etc/os-release", lambda: _os(snap)),
        kernel_release=release,
        kernel_config=_safe("/boot/config", lambda: _kernel_config(snap, release)),
        wsl=_safe("/proc/version", lambda: _wsl(snap)),
        container=_safe("/proc/1/cgroup", lambda: _container(snap)),
        amdgpu_initstate=Fact(initstate.status, (initstate.value or "").strip() or None, initstate.source, initstate.error),
        amdgpu_version=_file(snap, "/sys/module/amdgpu/version"),
        kfd_topology=_safe("/sys/class/kfd", lambda: _kfd_topology(snap)),
        gpus=_safe("/sys/class/kfd", lambda: _gpus(snap, env, rocminfo)),
        dev_kfd=_safe("/dev/kfd", lambda: _device(snap, "/dev/kfd")),
        render_nodes=_safe("/dev/dri", lambda: _render_nodes(snap)),
        dev_dxg=Fact(Status.FOUND, True, "/dev/dxg") if _path(snap, "/dev/dxg").found else _path(snap, "/dev/dxg"),  # type: ignore[arg-type]
        user=_safe("user", lambda: _user(snap)),
        rocm=_safe("/opt/rocm", lambda: _rocm(snap, env)),
        rocminfo=rocminfo,
        agent_enumerator=(found(tuple(parsers.parse_agent_enumerator(agent_enum.value.stdout)), agent_enum.source)
                          if agent_enum.found and agent_enum.value is not None else Fact(agent_enum.status, None, agent_enum.source)),
        nvidia=_safe("nvidia", lambda: _nvidia(snap)),
        env=env,
        python=_safe("python", lambda: _python(snap)),
        runtime=_safe("runtime", lambda: _runtime(snap)),
        which=found(dict(which), "which") if isinstance(which, dict) else unknown("which"),
        pci_display=_safe("/sys/bus/pci/devices", lambda: _pci(snap)),
        codeobjects=_safe("codeobjects", lambda: codeobjects_fact(snap)),
        commands=_commands(snap),
        raw=snap,
    )
