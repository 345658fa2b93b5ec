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


def probe():
    out = {"torch_version": None, "hip_version": None, "cuda_version": None, "is_available": None,
           "device_count": 0, "devices": [], "arch_list": None, "triton_version": None,
           "triton_backend": None, "triton_arch": None, "triton_error": None, "error": None}
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
            if arch:
                dev["gcnArchName"] = arch
            out["devices"].append(dev)
    except Exception as exc:
        out["error"] = "torch.cuda failed: " + _last_line(exc)
    if out["is_available"]:
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
    return out


if __name__ == "__main__":
    try:
        result = probe()
    except BaseException as exc:  # noqa: BLE001 - anything at all becomes data, not a traceback
        result = {"error": "runtime probe crashed: " + _last_line(exc), "trace": traceback.format_exc()[-2000:]}
    sys.stdout.write("\n@@RTD-RUNTIME@@" + json.dumps(result) + "\n")
    sys.stdout.flush()
