"""Before `smoke` imports torch and Triton into its own process, import them once in a child with a timeout.

`smoke --python X` re-executes the doctor inside X and then imports X's torch in-process, so a torch that segfaults at
import killed the doctor with no word (exit 139) and one that hangs hung it forever (issue #18, defect 3). The
child is the same runtime probe `check` uses (check/probes/runtime.py), so both commands describe a broken import
in the same words. Cost: one extra torch import (~1-3 s), paid before a run that takes far longer.
"""

from __future__ import annotations

import os
import sys

from rocm_triton_doctor.check.probes.runtime import run_probe

DEFAULT_TIMEOUT = 120.0  # as check's --runtime-timeout: a cold ROCm torch import can take a minute on a slow disk


class PreflightFailed(Exception):
    """torch or Triton cannot be imported here; the message is one line for the user."""


def timeout_from_env() -> float:
    """RTD_IMPORT_TIMEOUT (seconds) overrides the default; a bad value falls back to it."""
    try:
        value = float(os.environ.get("RTD_IMPORT_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def check_imports(python: str | None = None, timeout: float | None = None) -> dict[str, object]:
    """Raise PreflightFailed unless torch and Triton both import in `python` (default: this interpreter)."""
    python = python or sys.executable
    timeout = timeout if timeout is not None else timeout_from_env()
    # This process may have extended sys.path (smoke --python re-executes the doctor with its own packages appended):
    # the child gets the same path, so it imports exactly the torch this process would.
    r = run_probe(python, timeout, os.environ, extra_path=[p for p in sys.path if p])
    where = f" in {python}"
    if r.get("torch_installed") is False:
        raise PreflightFailed(f"torch is not installed{where}; install it with `rocm-triton-doctor install`, "
                              "or point --python at an environment that has it")
    if r.get("torch_import_failed") or r.get("timed_out"):
        how = str(r.get("error") or "import torch failed")
        how = how[len("import torch failed: "):] if how.startswith("import torch failed: ") else how
        raise PreflightFailed(f"cannot import torch{where} ({how}); run `rocm-triton-doctor check`")
    if r.get("triton_installed") is False:
        raise PreflightFailed(f"Triton is not installed{where}: smoke needs it, on the CPU too (interpreter mode); "
                              f"install it with `{python} -m pip install triton`, or run `rocm-triton-doctor install`")
    if r.get("triton_import_error"):
        raise PreflightFailed(f"cannot import triton{where} ({r['triton_import_error']}); run `rocm-triton-doctor check`")
    if r.get("torch_version") is None:
        raise PreflightFailed(f"cannot inspect torch{where} ({r.get('error') or 'no result'}); run `rocm-triton-doctor check`")
    return r
