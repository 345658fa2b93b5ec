"""Import torch and Triton in the TARGET interpreter, whatever the build (CPU included); print one JSON line.

Run in a subprocess with a timeout because importing a broken torch can raise, hang or kill the process
(`hipErrorNoBinaryForGpu` aborts at HIP init; a torch built for another glibc segfaults). So that the doctor can
say WHICH step died when the process never reaches its JSON line, a stage line is printed (and flushed) before each
risky step, and the torch facts are printed as a partial result before Triton is imported:

    @@RTD-STAGE@@import torch
    @@RTD-PARTIAL@@{...torch facts...}
    @@RTD-STAGE@@import triton
    @@RTD-RUNTIME@@{...everything...}

Every build is imported on purpose: a CPU build recognised from torch/version.py alone was reported as "runs on the
CPU" even when `import torch` raised or segfaulted (issue #18, defect 2). The version read statically is still
recorded, so a torch that cannot be imported is named with its version.
Stdlib + torch/triton only; Python 3.8-compatible.
"""
import json
import sys
import traceback
import warnings

STAGE = "@@RTD-STAGE@@"
PARTIAL = "@@RTD-PARTIAL@@"
MARKER = "@@RTD-RUNTIME@@"


def _emit(prefix, text):
    sys.stdout.write("\n" + prefix + text + "\n")
    sys.stdout.flush()


def _last_line(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text.strip().splitlines()[-1][:500] if text.strip() else type(exc).__name__


def _static_build():
    """(version, cuda, hip) from torch/version.py WITHOUT importing torch, or None if it cannot be read.

    Only used to name a torch whose import fails: torch/version.py is plain assignments written at build time.
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
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
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
    if "__version__" not in values:
        return None
    return values.get("__version__"), values.get("cuda"), values.get("hip")


def _installed(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def probe():
    out = {"torch_version": None, "hip_version": None, "cuda_version": None, "is_available": None,
           "device_count": 0, "devices": [], "arch_list": None, "triton_version": None,
           "triton_backend": None, "triton_arch": None, "triton_error": None, "error": None,
           "torch_imported": False, "triton_installed": _installed("triton"), "triton_imported": False,
           "triton_import_error": None}
    if not _installed("torch"):
        out["error"] = "import torch failed: No module named 'torch'"
        out["torch_import_failed"] = True
        out["torch_installed"] = False
        return out
    static = _static_build()
    if static is not None:
        out["torch_static_version"] = static[0]
    _emit(PARTIAL, json.dumps(out))
    _emit(STAGE, "import torch")
    try:
        # Third-party warnings (torch's "Failed to initialize NumPy") are not the user's problem here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a broken __init__ is a failed import too
        out["error"] = "import torch failed: " + _last_line(exc)
        out["torch_import_failed"] = True
        return out
    out["torch_imported"] = True
    out["torch_version"] = getattr(torch, "__version__", None)
    version = getattr(torch, "version", None)
    out["hip_version"] = getattr(version, "hip", None)
    out["cuda_version"] = getattr(version, "cuda", None)
    _emit(STAGE, "torch.cuda")
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
    if out["triton_installed"]:
        _emit(PARTIAL, json.dumps(out))
        _emit(STAGE, "import triton")
        _probe_triton(out)
    return out


def _probe_triton(out):
    """Import Triton; with a usable GPU also its active backend and target, as Triton selects them
    (triton/runtime/driver.py). On the CPU only the import is tested: the interpreter path needs no driver."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import triton
    except BaseException as exc:  # noqa: BLE001
        out["triton_import_error"] = _last_line(exc)
        return
    out["triton_imported"] = True
    out["triton_version"] = getattr(triton, "__version__", None)
    if not out["is_available"]:
        return
    _emit(STAGE, "triton driver")
    try:
        from triton.runtime import driver
        target = driver.active.get_current_target()
        out["triton_backend"] = getattr(target, "backend", None)
        arch = getattr(target, "arch", None)
        out["triton_arch"] = ("sm_%d" % arch) if isinstance(arch, int) else arch
    except Exception as exc:
        out["triton_error"] = _last_line(exc)


if __name__ == "__main__":
    try:
        result = probe()
    except BaseException as exc:  # noqa: BLE001 - anything at all becomes data, not a traceback
        result = {"error": "runtime probe crashed: " + _last_line(exc), "trace": traceback.format_exc()[-2000:]}
    _emit(MARKER, json.dumps(result))
