"""inductor-codegen (issue #17 item 2): `check` reports what the last saved `smoke --compile` / `smoke --model` run
showed about torch.compile's Triton code generation on this GPU — from the files, never by running anything — and
trusts it only for the torch/Triton versions and the host that produced it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.check.checks import run_checks, select
from rocm_triton_doctor.check.facts import build_facts
from rocm_triton_doctor.check.findings import Finding, Severity
from rocm_triton_doctor.check.fixsafety import violations
from rocm_triton_doctor.check.probes import smoke_history
from rocm_triton_doctor.smoke import model

ERR = "InductorError: RuntimeError: PassManager::run failed (ConvertWarpPipeline pass)"


def _model(forms: dict[str, dict[str, Any]], **more: Any) -> dict[str, Any]:
    # Each form as smoke/model.py records it: its traits (compile_mode, pytorch) come from the real form table.
    forms = {n: {**model.FORMS[n].traits(), **f} if f.get("status") in ("ok", "error", "oom") else f
             for n, f in forms.items()}
    return {"schema": "rocm-triton-doctor/model/1", "host": "box", "target": "hip:gfx1030", "started": "2026-11-27T10:00:00Z",
            "device_name": "AMD Radeon RX 6800 XT", "versions": {"torch": "2.9.1+rocm6.4", "triton": "3.5.1"},
            "forms": forms, **more}


def _kernels(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema": "rocm-triton-doctor/smoke/1", "command": "smoke", "status": "passed",
            "data": {"host": "box", "target": "hip:gfx1100", "device_name": "AMD Radeon RX 7900 XTX",
                     "started": "2026-11-27T09:00:00Z", "versions": {"torch": "2.9.1+rocm6.4", "triton": "3.5.1"},
                     "results": results}}


def _snap(runs: list[dict[str, Any]] | None, torch: str | None = "2.9.1+rocm6.4", host: str | None = "box") -> dict[str, Any]:
    snap: dict[str, Any] = {"schema": "rocm-triton-doctor/snapshot/1", "smoke_results": {"runs": runs} if runs is not None else None}
    if torch:
        snap["runtime"] = {"torch_version": torch, "triton_version": "3.5.1", "hip_version": "6.4", "cuda_version": None,
                           "is_available": True, "device_count": 1, "devices": [], "error": None}
    if host:
        snap["system"] = {"hostname": host}
    return snap


def _check(snap: dict[str, Any]) -> list[Finding]:
    return run_checks(build_facts(snap), select(["inductor-codegen"]))


def _run(kind: str, doc: dict[str, Any]) -> dict[str, Any]:
    return {"path": f"/home/u/.cache/rocm-triton-doctor/last-{kind}.json", "modified": "2026-11-27T10:05:00Z",
            **smoke_history.summarise(kind, doc)}


def test_summarise_keeps_only_inductors_own_attempts() -> None:
    doc = _model({"sdpa": {"status": "ok"}, "compile": {"status": "error", "error": ERR},
                  "compile-cudagraphs": {"status": "oom", "error": "OutOfMemoryError"},
                  "compile-fused-adamw": {"status": "skipped"}, "ours-compile": {"status": "error", "error": "ours"}})
    run = smoke_history.summarise("model", doc)
    assert run["compile"] == [{"what": "compile form", "ok": False, "error": ERR}]  # not OOM, not skipped, not ours
    assert run["target"] == "hip:gfx1030" and run["torch"] == "2.9.1+rocm6.4" and run["host"] == "box"
    k = smoke_history.summarise("kernels", _kernels([
        {"kernel": "softmax", "case": "bf16 4096x4096", "compile_ms": {"median_ms": 0.1}},
        {"kernel": "gemm", "case": "fp16 4096", "compile_error": ERR}, {"kernel": "add_mul", "case": "x"}]))
    assert k["compile"] == [{"what": "softmax bf16 4096x4096", "ok": True},
                            {"what": "gemm fp16 4096", "ok": False, "error": ERR}]
    assert k["device_name"] == "AMD Radeon RX 7900 XTX"  # read through smoke --json's envelope


def test_a_failed_compile_is_a_fail_with_the_error_and_a_safe_fix() -> None:
    (f,) = _check(_snap([_run("model", _model({"compile": {"status": "error", "error": ERR}}))]))
    assert f.severity is Severity.FAIL and f.id == "inductor-codegen"
    assert "AMD Radeon RX 6800 XT (gfx1030)" in f.title and ERR in f.detail and "2.9.1+rocm6.4" in f.detail
    assert f.fix is not None and f.fix.commands == ("rocm-triton-doctor report > report.md",)
    assert not violations(build_facts(_snap(None)), f)


def test_partial_failure_warns_and_success_is_ok() -> None:
    mixed = _kernels([{"kernel": "softmax", "case": "a", "compile_ms": {"median_ms": 1}},
                      {"kernel": "gemm", "case": "b", "compile_error": ERR}])
    (f,) = _check(_snap([_run("kernels", mixed)]))
    assert f.severity is Severity.WARN and "1 of 2" in f.title
    good = _model({"compile": {"status": "ok"}, "compile-cudagraphs": {"status": "ok"}})
    (f,) = _check(_snap([_run("model", good)]))
    assert f.severity is Severity.OK and "2 compiled forms" in f.title and "gfx1030" in f.title


def test_a_run_from_other_versions_or_another_host_judges_nothing() -> None:
    bad = _run("model", _model({"compile": {"status": "error", "error": ERR}}))
    (f,) = _check(_snap([bad], torch="2.10.0+rocm7.1"))
    assert f.severity is Severity.INFO and "torch 2.9.1+rocm6.4" in f.detail and "2.10.0+rocm7.1" in f.detail
    (f,) = _check(_snap([bad], host="node17"))
    assert f.severity is Severity.INFO and "host box" in f.detail
    # Versions not known now (runtime not probed): the saved run's own versions are stated, and it is judged.
    (f,) = _check(_snap([bad], torch=None, host=None))
    assert f.severity is Severity.FAIL


def test_nothing_saved_or_nothing_compiled_or_not_probed_skips() -> None:
    (f,) = _check(_snap(None))
    assert f.severity is Severity.SKIP and "no saved" in f.title and f.fix and "smoke --model" in f.fix.commands[0]
    (f,) = _check(_snap([_run("kernels", _kernels([{"kernel": "add_mul", "case": "x"}]))]))
    assert f.severity is Severity.SKIP and "did not use torch.compile" in f.title
    (f,) = _check({"schema": "rocm-triton-doctor/snapshot/1"})
    assert f.severity is Severity.SKIP and "not read" in f.title
    (f,) = _check({"schema": "rocm-triton-doctor/snapshot/1", "smoke_results": "garbage"})
    assert f.severity is Severity.SKIP and "could not be read" in f.title


def test_the_probe_reads_the_saved_files_and_never_raises(tmp_path: Path) -> None:
    files = {"kernels": str(tmp_path / "last-smoke.json"), "model": str(tmp_path / "last-model.json")}
    assert smoke_history.read(files) is None  # nothing saved: probed, absent
    Path(files["model"]).write_text(json.dumps(_model({"compile": {"status": "ok"}})))
    Path(files["kernels"]).write_text("{not json")
    sec = smoke_history.read(files)
    assert sec is not None
    by = {r["kind"]: r for r in sec["runs"]}
    assert by["model"]["compile"] == [{"what": "compile form", "ok": True}] and by["model"]["modified"]
    assert by["kernels"]["error"].startswith("JSONDecodeError")
    findings = _check(_snap(sec["runs"]))
    assert [f.severity for f in findings] == [Severity.INFO, Severity.OK]  # the unreadable file said, the model judged


def test_a_cpu_run_says_nothing_about_gpu_code() -> None:
    cpu = _model({"compile": {"status": "ok"}}, target="interpreter (CPU)", device_name="CPU (Triton interpreter)")
    (f,) = _check(_snap([_run("model", cpu)]))
    assert f.severity is Severity.INFO and "on the CPU" in f.title and f.fix is not None


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
                     lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                     max_leaves=20)
_KEYS = st.sampled_from(["kind", "path", "modified", "started", "host", "device_name", "target", "torch", "triton",
                         "compile", "error", "forms", "results", "versions", "data", "what", "ok", "status"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(_KEYS, _JSON, max_size=8), kind=st.sampled_from(["kernels", "model"]),
       section=_JSON | st.fixed_dictionaries({"runs": st.lists(st.dictionaries(_KEYS, _JSON, max_size=8), max_size=3)}))
def test_junk_saved_results_and_junk_sections_never_crash(doc: dict[str, Any], kind: str, section: Any) -> None:
    # A hand-edited or truncated cache file, or a pasted section of any shape: a finding, never a traceback.
    run = smoke_history.summarise(kind, doc)
    assert isinstance(run["compile"], list)
    for snap in (_snap([{"path": "p", **run}]), {"schema": "rocm-triton-doctor/snapshot/1", "smoke_results": section}):
        found = _check(snap)
        assert found and all(f.id == "inductor-codegen" for f in found), [(f.id, f.title) for f in found]
