"""Paste-in diagnosis: text a user pasted (an issue's blocks, a terminal session) -> the snapshot the probes would
have made (DESIGN §2 contract) -> `diagnose`.

Public API: `snapshot_from_text(texts) -> dict` and `diagnose_text(texts) -> CheckReport`.

Rules (docs/check.md "Paste-in diagnosis"):
* Only what the text shows is filled in. A key the text does not mention stays MISSING (unknown), never null or
  empty. Where the contract reads a present-but-incomplete section as "everything else absent" — `env` (a variable
  not listed is unset), `python.distributions` (a package not listed is not installed), `user.groups` — the
  snapshot names that section in top-level `partial` unless the text was complete (a full `env` dump; an unfiltered
  `pip list`/`pip freeze`; `id`).
* Every field made from text is marked: top-level `origin` maps "<section>.<key>" (for `files`/`paths`/`commands`
  the path or command name) to "text", and `source` is "pasted text".
* Extensions to the contract, all ignored by checks that do not know them: `errors` (verbatim error text with the
  ids of the knowledge/data/errors.json signatures it matches), `gpus_seen` (GPU names/gfx targets as other tools
  print them: rocm-smi, amd-smi, ollama, llama.cpp, clinfo, vulkaninfo, lspci, torch), `paths.*.open_error`
  (rocminfo's strerror for /dev/kfd), `system.os` (collect_env's OS line), `system.wsl` (rocminfo's
  "WSL environment detected"), `python.pip_indexes`,
  `python.pip_downloads`, `python.pip_errors`, `notes`.
* Parsers never raise: a block nothing recognises is still scanned for error text and environment variables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rocm_triton_doctor.check.sources import (
    collectives,
    collect_env,
    env,
    errtext,
    gpu_names,
    host,
    ids,
    kfd,
    ls,
    pip,
    repl,
    rocm_smi,
    rocminfo,
    system,
    workload,
)
from rocm_triton_doctor.check.sources._frag import Fragment, merge
from rocm_triton_doctor.check.sources.split import Segment, segments

if TYPE_CHECKING:
    from rocm_triton_doctor.check import CheckReport

SCHEMA = "rocm-triton-doctor/snapshot/1"
Parser = Callable[[str, "str | None"], Fragment]

# Content sniffers, tried on every segment whose command is unknown (or not shown): (detector, parser).
SNIFFERS: tuple[tuple[Callable[[str], bool], Parser], ...] = (
    (rocminfo.detect, lambda t, c: rocminfo.parse(t)),
    (rocm_smi.detect_rocm_smi, rocm_smi.parse_rocm_smi),
    (rocm_smi.detect_amd_smi, rocm_smi.parse_amd_smi),
    (collect_env.detect, collect_env.parse),
    (pip.detect, pip.parse),
    (ls.detect, ls.parse),
    (ids.detect, ids.parse_id),
    (system.detect_uname, system.parse_uname),
    (system.detect_os_release, system.parse_os_release),
    (system.detect_proc_version, system.parse_proc_version),
    (system.detect_kernel_config, system.parse_kernel_config),
    (system.detect_fetch, system.parse_fetch),
    (kfd.detect_properties, kfd.parse_properties),
    (kfd.detect_dmesg, kfd.parse_dmesg),
    (host.detect_lsmod, host.parse_lsmod),
    (host.detect_packages, host.parse_packages),
)
# Run on every segment: inline variables, container command lines, device open errors, GPU names, Windows hints,
# error text.
ALWAYS: tuple[Parser, ...] = (env.parse, system.parse_cmdline, system.parse_hip_headers,
                              host.parse_container_run, host.parse_compose, host.parse_nvidia_hints, host.parse_service,
                              host.parse_slurm_job, host.parse_amdgpu_install, host.parse_wsl_kernel,
                              host.parse_apt_sources,
                              host.parse_cluster_devices,
                              ls.parse_open_errors, ls.parse_prose_modes,
                              gpu_names.parse, gpu_names.parse_hip_device_count, gpu_names.parse_ollama_ps,
                              rocm_smi.parse_amd_smi_table,
                              rocm_smi.parse_amd_smi_header,
                              host.parse_windows, repl.parse_banner, repl.parse_labels, repl.parse_commented,
                              repl.parse_python_c,
                              pip.parse_install_commands, pip.parse_replaced_torch, pip.parse_torch_line, pip.parse_sdk_libraries,
                              system.parse_missing_files,
                              repl.parse_site_packages, collectives.parse, errtext.parse)


def _route(seg: Segment) -> list[Parser]:
    """The parsers for a segment whose command line is shown; [] means "sniff the content"."""
    word, cmd = seg.word, seg.cmd or ""
    if workload.detect(seg.cmd, seg.body):
        return [workload.parse]
    if repl.is_torch_expr(cmd):
        return [repl.parse]
    if word == "ollama" and re.search(r"\bollama\s+ps\b", cmd):
        return [gpu_names.parse_ollama_ps]
    if word == "amdgpu-arch":
        return [gpu_names.parse_amdgpu_arch]
    if re.search(r"win32_videocontroller", cmd, re.I):
        return [gpu_names.parse_wmi_video]
    if word == "lsmod":
        return [host.parse_lsmod]
    if word in ("apt", "apt-cache", "dpkg", "dnf", "yum", "rpm", "zypper"):
        return [host.parse_packages]
    if word == "rocminfo":
        return [lambda t, c: rocminfo.parse(t)]
    if word == "rocm-sdk" and "targets" in cmd:
        return [host.parse_rocm_sdk_targets]
    if word == "rocm-smi":
        return [rocm_smi.parse_rocm_smi]
    if word == "amd-smi":
        return [rocm_smi.parse_amd_smi]
    if word == "collect_env":
        return [collect_env.parse]
    if word == "pip":
        return [pip.parse]
    if word in ("ls", "stat"):
        return [ls.parse]
    if word == "id":
        return [ids.parse_id]
    if word == "groups":
        return [ids.parse_groups]
    if word == "whoami":
        return [ids.parse_whoami]
    if word == "uname":
        return [system.parse_uname]
    if word in ("dmesg", "journalctl"):
        return [kfd.parse_dmesg]
    if word in ("env", "printenv"):
        return [env.parse_dump]
    if word == "cat" and system.cat_path(cmd):
        return [system.parse_cat]
    if word in ("cat", "zgrep", "grep", "zcat", "head", "tail", "less", "more"):
        if "os-release" in cmd:
            return [system.parse_os_release]
        if "/proc/version" in cmd:
            return [system.parse_proc_version]
        if re.search(r"topology/nodes/.*properties", cmd):
            return [kfd.parse_properties]
        if "CONFIG_" in cmd or "config" in cmd:
            return [system.parse_kernel_config]
    return []


def _parse_segment(seg: Segment) -> Fragment:
    frag: Fragment = {}
    body = seg.body
    routed = _route(seg)
    parsers = routed or [p for d, p in SNIFFERS if _safe_bool(d, body)]
    for p in parsers:
        merge(frag, _safe(p, body, seg.cmd))
    for p in ALWAYS:  # a workload's environment is not this shell's: env.parse must not read it
        if not (p is env.parse and routed == [workload.parse]):
            merge(frag, _safe(p, body, seg.cmd))
    return frag


def _safe(p: Parser, text: str, cmd: str | None) -> Fragment:
    try:
        out = p(text, cmd)
        return out if isinstance(out, dict) else {}
    except Exception:  # noqa: BLE001 - a parser that trips on odd text must not lose the rest of the paste
        return {}


def _safe_bool(d: Callable[[str], bool], text: str) -> bool:
    try:
        return bool(d(text))
    except Exception:  # noqa: BLE001
        return False


def snapshot_from_text(texts: Iterable[str]) -> dict[str, Any]:
    """Pasted texts (each may hold several blocks) -> a snapshot dict. Never raises on any string input."""
    merged: Fragment = {}
    for text in texts:
        if not isinstance(text, str):
            continue
        merge(merged, _safe(host.parse_prompt, text, None))  # prompts are gone from the segments: read them here
        merge(merged, _safe(host.parse_dkms_status, text, None))  # an empty output is seen only beside its prompts
        try:
            segs = segments(text)
        except Exception:  # noqa: BLE001
            segs = [Segment(None, text)]
        for seg in segs:
            merge(merged, _parse_segment(seg))
    return _finish(merged)


def _finish(merged: Fragment) -> dict[str, Any]:
    partial: list[str] = []
    env_complete = bool(merged.pop("_env_complete", False))
    if "env" in merged and not env_complete:
        partial.append("env")
    py = merged.get("python")
    if isinstance(py, dict):
        complete = bool(py.pop("distributions_complete", False))
        if "distributions" in py and not complete:
            partial.append("python.distributions")
    from_path = merged.pop("_py_from_path", [])
    if len(from_path) == 1 and not (isinstance(merged.get("python"), dict) and "version" in merged["python"]):
        merge(merged, {"python": {"version": from_path[0]}})  # one interpreter in every path shown
    if isinstance(merged.get("runtime"), dict):
        repl.finish(merged["runtime"])
        if not merged["runtime"]:
            del merged["runtime"]
    if "gpus_seen" in merged:
        merged["gpus_seen"] = _combine_gpus(merged["gpus_seen"])
    snap: dict[str, Any] = {"schema": SCHEMA, "source": "pasted text"}
    snap.update(merged)
    snap["origin"] = _origin(merged)
    if partial:
        snap["partial"] = partial
    return snap


def _combine_gpus(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (tool, index) when the tool numbered its GPUs; name and gfx lines of one GPU join up."""
    out: list[dict[str, Any]] = []
    for e in entries:
        same = next((o for o in out if e.get("index") is not None and o.get("tool") == e.get("tool")
                     and o.get("index") == e.get("index")), None)
        if same is None:
            same = next((o for o in out if o == e or (o.get("tool") == e.get("tool") and o.get("gfx") == e.get("gfx")
                                                      and "name" not in o and "name" not in e and e.get("index") is None)),
                        None)
        if same is None:
            out.append(dict(e))
        else:
            for k, v in e.items():
                same.setdefault(k, v)
    return out


def _origin(merged: Fragment) -> dict[str, str]:
    out: dict[str, str] = {}
    for section, value in merged.items():
        if isinstance(value, dict):
            for key in value:
                out[f"{section}.{key}"] = "text"
        else:
            out[section] = "text"
    return out


def diagnose_text(texts: Iterable[str], **kw: Any) -> CheckReport:
    from rocm_triton_doctor.check import diagnose

    return diagnose(snapshot_from_text(texts), source="pasted text", **kw)
