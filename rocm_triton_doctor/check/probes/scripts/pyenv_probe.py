"""Describe this Python environment as one JSON line on stdout. Stdlib only; runs in the TARGET interpreter.

Never imports torch or triton: it reads installed-distribution metadata only, so it is fast and safe on a broken
ROCm. Kept Python 3.8-compatible because the target interpreter may be older than the doctor's.
"""
import json
import os
import sys
import sysconfig

try:
    from importlib import metadata as _md
except ImportError:  # pragma: no cover - Python < 3.8
    _md = None  # type: ignore[assignment]

# Distributions the checks reason about. Names are normalised (PEP 503) before comparison.
WATCHED = {
    "torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "triton-rocm", "pytorch-triton",
    "triton-nightly", "pynvml", "nvidia-ml-py", "amdsmi", "numpy", "rocm", "rocm-sdk-core", "xformers",
}
WATCHED_PREFIXES = ("amd-torch-device-", "rocm-sdk-libraries-", "nvidia-cuda-runtime", "nvidia-cublas")
# The doctor itself has "triton" in its name but is no Triton: counting it made `check --markdown` show
# "Triton | rocm-triton-doctor 0.1.0" and `fleet` report Triton drift between nodes (issue #18, defect 9).
SELF = "rocm-triton-doctor"


def _is_triton(key):
    return "triton" in key and key != SELF


def _norm(name):
    return "".join("-" if c in "_." else c for c in name.lower())


def _owns_triton(dist):
    files = dist.files or []
    for f in files:
        parts = str(f).replace("\\", "/").split("/")
        if parts[0] == "triton" and len(parts) == 2 and parts[1] == "__init__.py":
            return True
    return False


def probe():
    include = sysconfig.get_paths().get("include") or ""
    stdlib = sysconfig.get_paths().get("stdlib") or ""
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    conda = os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
    out = {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "virtualenv": in_venv,
        "conda": conda,
        # PEP 668: the marker lives in the base interpreter's stdlib dir; a venv is never externally managed.
        "externally_managed": (not in_venv) and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED")),
        "include_dir": include,
        "python_h": os.path.isfile(os.path.join(include, "Python.h")),
        "purelib": sysconfig.get_paths().get("purelib"),
        "distributions": {},
        "triton_owners": [],
    }
    if _md is None:
        out["error"] = "importlib.metadata unavailable"
        return out
    seen = set()
    for dist in _md.distributions():
        try:
            name = dist.metadata["Name"]
        except Exception:
            continue
        if not name:
            continue
        key = _norm(name)
        if key in seen:  # the same name twice on sys.path: the first one wins at import, as for pip
            out.setdefault("shadowed", []).append(key)
            continue
        seen.add(key)
        watched = key in WATCHED or key.startswith(WATCHED_PREFIXES) or _is_triton(key)
        if not watched:
            continue
        info = {"version": dist.version, "requires": list(dist.requires or [])}
        try:
            info["location"] = str(dist.locate_file(""))
        except Exception:
            pass
        try:
            installer = dist.read_text("INSTALLER")
            if installer:
                info["installer"] = installer.strip()
            direct = dist.read_text("direct_url.json")
            if direct:
                info["direct_url"] = json.loads(direct).get("url")
        except Exception:
            pass
        if _is_triton(key) and _owns_triton(dist):
            out["triton_owners"].append(key)
        out["distributions"][key] = info
    return out


if __name__ == "__main__":
    try:
        result = probe()
    except Exception as exc:  # report, never crash: the doctor turns this into a finding
        result = {"error": "%s: %s" % (type(exc).__name__, exc)}
    sys.stdout.write(json.dumps(result) + "\n")
