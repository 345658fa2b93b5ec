"""Import torch (and Triton when a GPU is usable) in the TARGET interpreter; print one JSON line.

Run in a subprocess with a timeout because importing a broken ROCm torch can hang or abort the process
(`hipErrorNoBinaryForGpu` aborts at HIP init). Stdlib + torch/triton only; Python 3.8-compatible.
"""
import json
import sys
import traceback


def _last_line(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text.strip().splitlines()[-1][:500] if text.strip() else type(exc).__name__


def _static_build():
    """(version, cuda, hip) from torch/version.py WITHOUT importing torch, or None if it cannot be read.

    torch/version.py is plain assignments written at build time (`__version__`, `cuda`, `hip`), so a CPU-only build
    can be recognised without paying the ~1.5 s import: it has no GPU runtime to probe.
    """
    import ast
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return None
    values = {}
    for node in tree.body:
        # Both `cuda = None` and the annotated `cuda: Optional[str] = '13.0'` (torch >= 2.x) occur.
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        else:
            continue
        try:
            values[name] = ast.literal_eval(value)
        except ValueError:
            pass
    if not {"__version__", "cuda", "hip"} <= set(values):
        return None  # unknown layout: import torch instead of guessing
    return values.get("__version__"), values.get("cuda"), values.get("hip")


def probe():
    out = {"torch_version": None, "hip_version": None, "cuda_version": None, "is_available": None,
           "device_count": 0, "devices": [], "arch_list": None, "triton_version": None,
           "triton_backend": None, "triton_arch": None, "triton_error": None, "error": None}
    static = _static_build()
    if static is not None and static[1] is None and static[2] is None:
        # A CPU-only build: is_available() is False by construction and there is no device or Triton backend.
        out.update(torch_version=static[0], is_available=False, arch_list=[], torch_imported=False)
        return out
    if static is None and not _torch_installed():
        out["error"] = "import torch failed: No module named 'torch'"
        out["torch_import_failed"] = True
        return out
    try:
        import torch
    except Exception as exc:
        out["error"] = "import torch failed: " + _last_line(exc)
        out["torch_import_failed"] = True
        return out
    out["torch_version"] = getattr(torch, "__version__", None)
    version = getattr(torch, "version", None)
    out["hip_version"] = getattr(version, "hip", None)
    out["cuda_version"] = getattr(version, "cuda", None)
    try:
        out["is_available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count()) if out["is_available"] else 0
        try:
            out["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception:
            out["arch_list"] = None
        for i in range(out["device_count"]):
            props = torch.cuda.get_device_properties(i)
            dev = {"index": i, "name": props.name, "total_memory": int(getattr(props, "total_memory", 0)),
                   "capability": [props.major, props.minor],
                   "multi_processor_count": int(getattr(props, "multi_processor_count", 0))}
            arch = getattr(props, "gcnArchName", None)
            if arch and out["hip_version"]:  # CUDA builds echo the device name here
                dev["gcnArchName"] = arch
            out["devices"].append(dev)
    except Exception as exc:
        out["error"] = "torch.cuda failed: " + _last_line(exc)
    if out["is_available"]:
        _probe_triton(out)
    return out


def _probe_triton(out):
    """Triton's active backend and target, as Triton itself selects them (triton/runtime/driver.py)."""
    try:
        import triton
        out["triton_version"] = getattr(triton, "__version__", None)
        from triton.runtime import driver
        target = driver.active.get_current_target()
        out["triton_backend"] = getattr(target, "backend", None)
        arch = getattr(target, "arch", None)
        out["triton_arch"] = ("sm_%d" % arch) if isinstance(arch, int) else arch
    except Exception as exc:
        out["triton_error"] = _last_line(exc)


def _torch_installed():
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


if __name__ == "__main__":
    try:
        result = probe()
    except BaseException as exc:  # noqa: BLE001 - anything at all becomes data, not a traceback
        result = {"error": "runtime probe crashed: " + _last_line(exc), "trace": traceback.format_exc()[-2000:]}
    sys.stdout.write("\n@@RTD-RUNTIME@@" + json.dumps(result) + "\n")
    sys.stdout.flush()
