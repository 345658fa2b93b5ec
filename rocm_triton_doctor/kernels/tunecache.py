"""The per-device autotune cache (issue #16 item 2): launch configs measured on THIS device for the shapes where the
policy's rule (policy.py) is not the best, filled by `smoke --tune` and read back by the launchers on every call.

Where: `$RTD_CACHE_DIR` or `$XDG_CACHE_HOME/rocm-triton-doctor` (default `~/.cache/rocm-triton-doctor`), in
`tune/<device key>.json`. The device key hashes what a config's speed depends on: the device name, the compile target
(backend, arch, warp size), and the Triton, torch and tool versions — a new driver stack, a Triton upgrade or another GPU
reads another file, so a stale entry is never applied (that is the invalidation; delete the directory to forget
everything). `RTD_TUNE_CACHE=off` turns reading off (the policy alone decides).

A launcher asks `lookup(kernel, key)` with a key of plain values (dtype, shape, epilogue, ...); the answer is a
config dict or None. What it returns was checked when it was stored (correct output, faster than the policy), and
the launcher validates it again like any `config=` argument, so a corrupt or hand-edited file cannot crash a call:
entries that fail validation are dropped with a warning. `forced()` makes every lookup of one kernel return a given
config (how `smoke --tune` times candidates), and `last_key(kernel)` says under which key the last call looked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCHEMA = "rocm-triton-doctor/tune/1"
Key = tuple[Any, ...]

_entries: dict[str, dict[str, dict[str, Any]]] | None = None  # kernel -> key string -> {"config", "us", ...}
_path: Path | None = None
_forced: dict[str, dict[str, Any]] = {}
_last: dict[str, Key] = {}
_validators: dict[str, Callable[[dict[str, Any]], Any]] = {}


def cache_dir() -> Path:
    base = os.environ.get("RTD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "rocm-triton-doctor")
    return Path(base) / "tune"


def device_identity(device_name: str, target: Any) -> dict[str, str]:
    """What a measured config depends on; its hash names the cache file."""
    import torch
    import triton

    from rocm_triton_doctor import __version__

    return {"device": device_name, "target": f"{target.backend}:{target.arch}:wave{target.warp_size}",
            "triton": triton.__version__, "torch": torch.__version__, "tool": __version__}


def path_for(identity: dict[str, str]) -> Path:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir() / f"{digest}.json"


_generation = 0  # bumped whenever what lookup() would answer may change (launchers key cached launch plans on it)


def generation() -> int:
    """A number that changes whenever a lookup could answer differently than before (a cache loaded, forgotten, an
    entry stored or dropped, a forced config entered or left): gemm's launch plans include it in their key."""
    return _generation


def _changed() -> None:
    global _generation
    _generation += 1


def key_text(key: Key) -> str:
    return "|".join(str(k) for k in key)


def register_validator(kernel: str, check: Callable[[dict[str, Any]], Any]) -> None:
    """The launcher's own config check (raises ValueError on a bad config); entries read from disk must pass it."""
    _validators[kernel] = check


def activate(identity: dict[str, str]) -> Path:
    """Load the cache file of this device (called once per process by the first GPU lookup, or by smoke)."""
    global _entries, _path
    _changed()
    _path = path_for(identity)
    _entries = {}
    try:
        data = json.loads(_path.read_text())
        if data.get("schema") == SCHEMA and data.get("identity") == identity:
            _entries = {k: dict(v) for k, v in data.get("entries", {}).items() if isinstance(v, dict)}
    except FileNotFoundError:
        pass
    except (OSError, ValueError, AttributeError) as exc:
        warnings.warn(f"rocm-triton-doctor: ignoring the unreadable tune cache {_path}: {exc}", stacklevel=2)
    return _path


def _auto_activate(target: Any) -> None:
    try:
        import torch

        activate(device_identity(torch.cuda.get_device_name(torch.cuda.current_device()), target))
    except Exception as exc:  # noqa: BLE001 - no cache is never an error: the policy decides
        global _entries
        _entries = {}
        _changed()
        warnings.warn(f"rocm-triton-doctor: tune cache not loaded: {exc}", stacklevel=3)


def deactivate() -> None:
    """Forget the loaded cache (tests; a process that changes device)."""
    global _entries, _path
    _entries, _path = None, None
    _changed()


def enabled() -> bool:
    """Whether lookups read the cache (RTD_TUNE_CACHE=off|0|no turns reading off)."""
    return os.environ.get("RTD_TUNE_CACHE", "on").lower() not in ("off", "0", "no")



def lookup(kernel: str, key: Key, target: Any = None) -> dict[str, Any] | None:
    """The config to launch `kernel` with under `key`, or None (use the policy). O(1): one dict lookup; the first
    GPU lookup of the process loads this device's file (`target`: the launcher's policy.Target). The interpreter
    never reads the cache."""
    _last[kernel] = key
    forced = _forced.get(kernel)
    if forced is not None:
        return dict(forced)
    if target is not None and target.interpreter:
        return None
    if _entries is None:
        if target is None or not enabled():
            return None
        _auto_activate(target)
    if not _entries or not enabled():
        return None
    entry = _entries.get(kernel, {}).get(key_text(key))
    if entry is None:
        return None
    cfg = entry.get("config")
    check = _validators.get(kernel)
    try:
        if not isinstance(cfg, dict):
            raise ValueError("not a dict")
        if check is not None:
            check(cfg)
    except (ValueError, TypeError) as exc:
        warnings.warn(f"rocm-triton-doctor: dropping tune cache entry {kernel} {key_text(key)}: {exc}", stacklevel=2)
        _entries[kernel].pop(key_text(key), None)
        _changed()
        return None
    return dict(cfg)


def last_key(kernel: str) -> Key | None:
    return _last.get(kernel)


def note(kernel: str, key: Key) -> None:
    """Record `key` as the kernel's last lookup without looking it up (a launcher that reused a cached plan)."""
    _last[kernel] = key


@contextlib.contextmanager
def forced(kernel: str, config: dict[str, Any] | None) -> Iterator[None]:
    """Every lookup of `kernel` returns `config` inside the block (None: the policy, ignoring the cache)."""
    _forced[kernel] = dict(config) if config is not None else {}
    _changed()
    try:
        yield
    finally:
        _forced.pop(kernel, None)
        _changed()


def store(kernel: str, key: Key, config: dict[str, Any], us: float, policy_us: float) -> None:
    if _entries is None:
        raise RuntimeError("tunecache.activate() first")
    _entries.setdefault(kernel, {})[key_text(key)] = {"config": dict(config), "us": round(us, 3),
                                                      "policy_us": round(policy_us, 3)}
    _changed()


def entries() -> dict[str, dict[str, dict[str, Any]]]:
    return {k: dict(v) for k, v in (_entries or {}).items()}


def save(identity: dict[str, str]) -> Path:
    """Write the cache atomically (a temporary file renamed over the old one: a crash leaves the old file)."""
    if _path is None or _entries is None:
        raise RuntimeError("tunecache.activate() first")
    _path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"schema": SCHEMA, "identity": identity, "entries": _entries}, indent=1, sort_keys=True))
    os.replace(tmp, _path)
    return _path
