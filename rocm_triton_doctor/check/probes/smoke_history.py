"""What this machine's saved `smoke` runs showed about torch.compile (issue #17 item 2): `smoke --compile` compiles
each kernel case's eager torch form with torch.compile, and `smoke --model` trains PyTorch-only forms under
torch.compile; both exercise inductor's Triton code generation for this GPU, and a failure there is a finding
`check` should report (checks/smoke_history.py) without running anything itself.

Snapshot key `smoke_results` (docs/snapshot.md): missing = not probed, null = probed and no saved result, else
{"runs": [run, ...]} with, per saved file, the fields the check reads:

    {"kind": "kernels" | "model", "path", "modified" (ISO time of the file), "started", "host", "device_name",
     "target" ("hip:gfx1100", "cuda:sm_90"; null when the file has none), "torch", "triton",
     "compile": [{"what": "compile form" | "softmax bf16 4096x4096", "ok": true | false, "error": "..."}]}

or {"kind", "path", "error"} when a file cannot be read. Only inductor's own attempts are kept: the PyTorch-only
model forms run under torch.compile, as the result marks them (not ours-compile, whose failure could be our op's), and
the compiled eager baselines.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

MAX_BYTES = 64 << 20  # a smoke result with every sweep row is a few MB


def paths() -> dict[str, str]:
    """The files `smoke` and `smoke --model` keep their last result in (XDG cache; RTD_CACHE_DIR overrides)."""
    from rocm_triton_doctor.smoke.model_render import last_model_path
    from rocm_triton_doctor.smoke.report import last_result_path  # neither imports torch

    return {"kernels": last_result_path(), "model": last_model_path()}


def _envelope_data(doc: Any) -> dict[str, Any]:
    """The run itself: `smoke --json` wraps it as the envelope's "data"; last-model.json is the bare result."""
    if isinstance(doc, dict) and isinstance(doc.get("data"), dict):
        return doc["data"]
    return doc if isinstance(doc, dict) else {}


def _text(v: Any) -> str | None:
    return str(v) if v not in (None, "") else None


def summarise(kind: str, doc: Any) -> dict[str, Any]:
    """One saved result as the snapshot's run record (pure: the tests feed it documents)."""
    d = _envelope_data(doc)
    versions: dict[str, Any] = d["versions"] if isinstance(d.get("versions"), dict) else {}
    attempts: list[dict[str, Any]] = []
    if kind == "model":
        forms: dict[str, Any] = d["forms"] if isinstance(d.get("forms"), dict) else {}
        for name, f in forms.items():
            # The result says how each form ran (smoke/model.py Form.traits): inductor's own attempts are the
            # PyTorch-only forms under torch.compile that finished or failed (not skipped, not out of memory).
            if not (isinstance(f, dict) and f.get("pytorch") is True and f.get("compile_mode")
                    and f.get("status") in ("ok", "error")):
                continue
            attempts.append({"what": f"{name} form", "ok": f["status"] == "ok",
                             **({"error": str(f.get("error") or "")[:500]} if f["status"] == "error" else {})})
    else:
        results = d.get("results")
        for r in results if isinstance(results, list) else []:
            if not isinstance(r, dict):
                continue
            what = f"{r.get('kernel', '?')} {r.get('case', '')}".strip()
            if r.get("compile_error"):
                attempts.append({"what": what, "ok": False, "error": str(r["compile_error"])[:500]})
            elif r.get("compile_ms"):
                attempts.append({"what": what, "ok": True})
    return {"kind": kind, "started": _text(d.get("started")), "host": _text(d.get("host")),
            "device_name": _text(d.get("device_name")), "target": _text(d.get("target")),
            "torch": _text(versions.get("torch")), "triton": _text(versions.get("triton")), "compile": attempts}


def read(files: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The `smoke_results` section: None when no saved result exists. Never raises."""
    runs = []
    for kind, path in (files or paths()).items():
        try:
            st = os.stat(path)
            if st.st_size > MAX_BYTES:
                runs.append({"kind": kind, "path": path, "error": f"larger than {MAX_BYTES >> 20} MiB"})
                continue
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except FileNotFoundError:
            continue
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            runs.append({"kind": kind, "path": path, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        modified = _dt.datetime.fromtimestamp(st.st_mtime, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        try:
            runs.append({"path": path, "modified": modified, **summarise(kind, doc)})
        except Exception as exc:  # noqa: BLE001 - a hand-edited file of an unexpected shape is recorded, never raised
            runs.append({"kind": kind, "path": path, "error": f"unexpected content: {type(exc).__name__}: {exc}"[:300]})
    return {"runs": runs} if runs else None
