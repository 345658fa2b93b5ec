"""checks/codeobjects.py (codeobject-target-missing, codeobject-gpu-code) and their facts: findings name the library, what
it has, and what the device needs; one test per severity each check can give."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks import run_checks, select
from rocm_triton_doctor.check.facts import Fact, Facts, Status, build_facts, found
from rocm_triton_doctor.check.facts.codeobjects import parse_objdump_offloading, parse_roc_obj_ls, runs_on
from rocm_triton_doctor.check.findings import Finding, Severity

from ...conftest import load_scenario
from ..conftest import AMD_LIVE, NO_BINARY, NO_HIP, gpu, one, pasted

NAVI3 = ["gfx1100", "gfx1101", "gfx1102"]


def facts(section: Any, gfx: str | None = "gfx1103", env: dict[str, str] | None = None, drop: bool = False) -> Facts:
    snap = load_scenario("rx7900xtx-healthy")
    if not drop:
        snap["codeobjects"] = section
    f = build_facts(snap)
    if gfx:
        g = replace((f.gpus.value or ())[0], gfx=gfx, effective_gfx=gfx, info=knowledge.gfx_info(gfx))
        f = replace(f, gpus=found((g,), "test"))
    if env is not None:
        f = replace(f, env=found({**(f.env.value or {}), **env}, "test"), rocminfo=Fact(Status.UNKNOWN))
    return f


def findings(f: Facts) -> list[Finding]:
    return run_checks(f, select(["codeobjects"]))


def section(libs: list[tuple[str, list[str]]], **more: Any) -> dict[str, Any]:
    return {"roots": ["/site/torch"], "shared_objects": 40, "elapsed_s": 0.4,
            "libraries": [{"path": p, "bundles": 10, "compressed": "zstd", "targets": t, "partial": False, "error": None}
                          for p, t in libs], **more}


def test_missing_target_names_library_and_gpu() -> None:
    out = findings(facts(section([("torch/lib/libtorch_hip.so", NAVI3)])))
    miss = [x for x in out if x.id == "codeobject-target-missing"]
    assert len(miss) == 1 and miss[0].severity.value == "fail"
    assert miss[0].title.startswith("libtorch_hip.so has gfx1100, gfx1101, gfx1102 — not gfx1103, your GPU")


def test_tensile_lacks_target_while_torch_has_it() -> None:
    sec = section([("torch/lib/libtorch_hip.so", [*NAVI3, "gfx1103"])],
                  tensile=[{"lib": "rocblas", "dir": "torch/lib/rocblas/library", "files": 90, "targets": NAVI3}],
                  miopen=[{"dir": "torch/share/miopen/db", "files": 3, "targets": ["gfx1100"]}])
    out = {(x.severity.value, x.title.split(" — ")[0]) for x in findings(facts(sec)) if x.id == "codeobject-target-missing"}
    assert out == {("fail", "rocblas (torch/lib/rocblas/library) has gfx1100, gfx1101, gfx1102"),
                   ("info", "miopen (torch/share/miopen/db) has gfx1100")}


def test_all_present_is_ok() -> None:
    out = findings(facts(section([("torch/lib/libtorch_hip.so", NAVI3)]), gfx="gfx1100"))
    assert [x.severity.value for x in out if x.id == "codeobject-target-missing"] == ["ok"]


def test_xnack_only_kpacks_on_an_xnack_off_device() -> None:
    sec = section([], kpack=[{"dir": "_rocm_sdk/lib/.kpack", "files": 2, "targets": ["gfx90a:xnack+"]}])
    out = [x for x in findings(facts(sec, gfx="gfx90a", env={"HSA_XNACK": "0"})) if x.id == "codeobject-target-missing"]
    assert out[0].severity.value == "fail" and "gfx90a:xnack+ only — gfx90a here runs with xnack-" in out[0].title
    ok = [x for x in findings(facts(sec, gfx="gfx90a", env={"HSA_XNACK": "1"})) if x.id == "codeobject-target-missing"]
    assert ok[0].severity.value == "ok"


def test_cpu_build_says_it_has_no_gpu_code() -> None:
    cpu = {"roots": ["/site/torch"], "shared_objects": 12, "libraries": [], "tensile": [], "miopen": [], "kpack": []}
    out = {x.id: x for x in findings(facts(cpu))}
    assert out["codeobject-gpu-code"].severity.value == "warn" and "no GPU code in /site/torch" in out["codeobject-gpu-code"].title
    assert out["codeobject-target-missing"].severity.value == "skip"


def test_unknown_and_absent_skip() -> None:
    for f in (facts(None, drop=True), facts(None)):
        assert {x.severity.value for x in findings(f)} == {"skip"}


def test_garbage_section_is_an_error_fact_not_a_crash() -> None:
    f = facts({"libraries": "not a list", "roots": 5})
    assert all(x.id != "internal-error" for x in findings(f))


ROC_OBJ_LS = """\
Bundle# Entry ID:                                                              URI:
1       host-x86_64-unknown-linux                                           file:///opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so#offset=8192&size=0
1       hipv4-amdgcn-amd-amdhsa--gfx1100                                     file:///opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so#offset=8192&size=18440
1       hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-                               file:///opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so#offset=26632&size=19120
"""

OBJDUMP = """\
/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so:\tfile format elf64-x86-64
Extracting offload bundle: libtorch_hip.so.0.hipv4-amdgcn-amd-amdhsa--gfx1101
Extracting offload bundle: libtorch_hip.so.0.hipv4-amdgcn-amd-amdhsa--gfx1102

/tmp/a.out:\tfile format elf64-x86-64

OFFLOADING IMAGE [0]:
kind            elf
arch            gfx942:sramecc+:xnack-
triple          amdgcn-amd-amdhsa
"""


def test_pasted_tool_output() -> None:
    assert parse_roc_obj_ls(ROC_OBJ_LS) == {"libtorch_hip.so": ("gfx1100", "gfx90a:xnack-")}
    assert parse_objdump_offloading(OBJDUMP) == {"libtorch_hip.so": ("gfx1101", "gfx1102"),
                                                 "a.out": ("gfx942:sramecc+:xnack-",)}
    sec = {"pasted": [{"tool": "roc-obj-ls", "text": ROC_OBJ_LS}]}
    miss = [x for x in findings(facts(sec)) if x.id == "codeobject-target-missing"]
    assert miss[0].title.startswith("libtorch_hip.so has gfx1100, gfx90a — not gfx1103") and "pasted" in miss[0].evidence[0]


def test_target_id_rules() -> None:
    assert runs_on("gfx90a", "gfx90a", {"xnack": "+"})  # unspecified feature: runs either way
    assert not runs_on("gfx90a:xnack+", "gfx90a", {"xnack": "-"})
    assert runs_on("gfx90a:xnack+", "gfx90a", {})  # device state unknown: not claimed to fail
    assert runs_on("gfx11-generic", "gfx1103", {}) and not runs_on("gfx11-generic", "gfx1030", {})
    assert not runs_on("gfx1100", "gfx1103", {})


def _cli(*args: str) -> dict[str, Any]:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    res = subprocess.run([sys.executable, "-m", "rocm_triton_doctor", "check", "--json", "--only", "codeobjects", *args],
                         capture_output=True, text=True, timeout=300, env=env, cwd=root)
    assert "Traceback" not in res.stderr, res.stderr
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def by_id(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for x in data["findings"]:
        out.setdefault(x["id"], []).append(x)
    return out


def test_cli_on_this_machine_and_on_test_bundles(tmp_path: Any) -> None:
    """`check` shows the audit of this machine's torch (a CPU build here) and of a stack made of test bundles."""
    import json
    import re
    import sys
    from pathlib import Path

    from rocm_triton_doctor.check.probes import codeobjects as co

    from ..test_codeobjects import fake_torch

    here = by_id(_cli("--no-runtime"))
    torch_dir = next((Path(p) / "torch" for p in sys.path if (Path(p) / "torch" / "lib").is_dir()), None)
    if torch_dir is not None and re.search(r"^hip\b.*= None$", (torch_dir / "version.py").read_text(), re.M):
        assert "no GPU code in" in here["codeobject-gpu-code"][0]["title"]
    snap = load_scenario("rx7900xtx-healthy")  # gfx1100 on KFD
    snap["codeobjects"] = co.audit([str(fake_torch(tmp_path / "site", ["gfx1030", "gfx90a:xnack-"]))], use_cache=False)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snap))
    data = by_id(_cli("--snapshot", str(path)))
    titles = [x["title"] for x in data["codeobject-target-missing"]]
    assert "libtorch_hip.so has gfx1030, gfx90a — not gfx1100, your GPU (node 1: Radeon RX 7900 XTX (gfx1100))" in titles
    assert data["codeobject-gpu-code"][0]["severity"] == "ok"


def test_gpu_code_ok_names_the_targets_found() -> None:
    out = [x for x in findings(facts(section([("torch/lib/libtorch_hip.so", NAVI3)]))) if x.id == "codeobject-gpu-code"]
    assert [(x.severity.value, x.title) for x in out] == [
        ("ok", "GPU code for gfx1100, gfx1101, gfx1102 in 1 HIP library in 0.40 s")]


def test_gpu_code_info_cpu_build_without_a_gpu() -> None:
    cpu = {"roots": ["/site/torch"], "shared_objects": 12, "libraries": [], "tensile": [], "miopen": [], "kpack": []}
    f = build_facts({"schema": "rocm-triton-doctor/snapshot/1", "codeobjects": cpu})
    out = [x for x in findings(f) if x.id == "codeobject-gpu-code"]
    assert [(x.severity.value, x.title) for x in out] == [
        ("info", "no GPU code in /site/torch: 12 shared objects, none with a .hip_fatbin section (a CPU build)")]
    assert out[0].fix is None


def test_gpu_code_info_for_a_partly_read_library() -> None:
    sec = section([("torch/lib/libtorch_hip.so", NAVI3)])
    sec["libraries"][0].update(partial=True, error="time budget reached after 2.0 s")
    out = [x for x in findings(facts(sec)) if x.id == "codeobject-gpu-code"]
    assert [x.severity.value for x in out] == ["info", "ok"]
    assert out[0].title == "libtorch_hip.so: only part of its code objects could be read"
    assert out[0].detail == "time budget reached after 2.0 s"


def test_gpu_code_object_skip_without_the_error() -> None:
    assert one("gpu-code-object", errors=pasted(NO_HIP)).severity is Severity.SKIP

def test_gpu_code_object_fails_without_a_fix_when_the_gpu_is_unknown() -> None:
    # The program aborted for want of code (legacy-rocm-build#1815, a Steam Deck): a failure whatever the GPU; the
    # remedy waits for the GPU's identity, so no fix.
    f = one("gpu-code-object", errors=pasted(NO_BINARY))
    assert f.severity is Severity.FAIL and f.fix is None and f.evidence == (f"text: {NO_BINARY}",)

def test_gpu_code_object_fail_same_family_override() -> None:
    # gfx1031 (RX 6700 XT) runs gfx1030 code: HSA_OVERRIDE_GFX_VERSION=10.3.0. The build's targets are unknown here,
    # so the value is said but no command is given (a command only from facts that were found).
    f = one("gpu-code-object", errors=pasted(NO_BINARY), files={**AMD_LIVE, **gpu(1, 100301)})
    assert f.severity is Severity.FAIL and "gfx1031" in f.title and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.title
    assert f.fix is not None and f.fix.commands == () and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.fix.text
    # The build says what it carries (gfx1030 among them): now the command follows from facts.
    listed = NO_BINARY + "\nThe supported AMDGPU versions are gfx1030, gfx1100."
    f = one("gpu-code-object", errors=pasted(listed), files={**AMD_LIVE, **gpu(1, 100301)})
    assert f.fix is not None and f.fix.commands == ("export HSA_OVERRIDE_GFX_VERSION=10.3.0",)

def test_gpu_code_object_rocblas_missing_tensile_for_the_arch() -> None:
    # rocBLAS names the arch it ran on; no torch in sight: the program's own rocBLAS lacks it (ollama#2870).
    text = ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : "
            "gfx1032")
    seen = [{"tool": "rocblas", "gfx": "gfx1032"}]  # what sources/gpu_names reads from the same line
    f = one("gpu-code-object", errors=pasted(text), files=AMD_LIVE, gpus_seen=seen)
    assert f.severity is Severity.FAIL and "gfx1032" in f.title and "10.3.0" in f.fix.text  # type: ignore[union-attr]
    # A system /opt/rocm rocBLAS inside a torch process may be a library mix instead: not decided here.
    torch_text = text + "\n  File \"/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py\", line 125"
    assert one("gpu-code-object", errors=pasted(torch_text), files=AMD_LIVE, gpus_seen=seen).severity is Severity.SKIP

def test_gpu_code_object_target_dropped_by_the_rocm_in_use() -> None:
    # ROCm 6.4.0's rocBLAS ships no gfx906 (legacy-rocm-build#4625): a newer build cannot help, nor can an override.
    text = ("rocBLAS error: Cannot read /opt/rocm-6.4.0/lib/rocblas/library/TensileLibrary.dat: No such file or "
            "directory for GPU arch : gfx906")
    f = one("gpu-code-object", errors=pasted(text), files=AMD_LIVE, gpus_seen=[{"tool": "rocblas", "gfx": "gfx906"}])
    assert f.severity is Severity.FAIL and "ROCm 6.4.0 no longer carries gfx906" in f.title
    assert f.fix is not None and f.fix.commands == () and "HSA_OVERRIDE_GFX_VERSION" not in f.fix.text

def test_gpu_code_object_warn_when_the_build_lists_the_target() -> None:
    text = NO_BINARY + "\nThe supported AMDGPU versions are gfx1030, gfx1100."
    f = one("gpu-code-object", errors=pasted(text), files={**AMD_LIVE, **gpu(1, 110000)})
    assert f.severity is Severity.WARN and "gfx1100" in f.title and "gfx1030, gfx1100" in f.detail

def test_a_code_object_error_naming_the_discrete_gpu_is_not_the_igpus() -> None:
    # lamikr/rocm_sdk_builder#246: an SDK built for gfx1100 on an RX 7800 XT (gfx1101) beside a gfx1036 iGPU.
    err = pasted("Cannot find CO in the bundle /opt/rocm_sdk_612/lib64/librocblas.so for ISA: amdgcn-amd-amdhsa--gfx1101\n"
                 "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")
    files = {**AMD_LIVE, **gpu(1, 110001), **gpu(2, 100306)}
    f = one("gpu-code-object", errors=err, files=files)
    assert f.severity is Severity.FAIL and "gfx1101" in f.title
    assert one("igpu-with-dgpu", errors=err, files=files).severity is Severity.WARN  # a side issue, not the crash


def test_an_override_read_from_the_runtimes_own_target_says_to_check_for_one_first() -> None:
    # ollama#16040: rocBLAS's `Illegal seek for GPU arch : gfx1035` on what was a 780M (gfx1103): the runtime reports
    # its target after any override, so the advice says to check for one and paste rocminfo first
    f = one("gpu-code-object", errors=pasted('error="runner crashed" detail="error: Cannot read /usr/local/lib/ollama/'
                                             'rocm/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1035"'),
            gpus_seen=[{"tool": "rocblas", "gfx": "gfx1035"}])
    assert f.severity.value == "fail" and f.fix is not None and not f.fix.commands
    assert "after any HSA_OVERRIDE_GFX_VERSION" in f.fix.text and "rocminfo" in f.fix.text


def test_gpu_code_object_names_no_override_for_an_igpu_known_only_from_a_mention() -> None:
    # legacy-rocm-build#4386: a rocminfo fragment shows a gfx1036 (a desktop iGPU) and vLLM dies with invalid device
    # function; the machine's 7900 XT is not in the excerpt, and an override would apply to it too.
    text = "RuntimeError: HIP error: invalid device function"
    f = one("gpu-code-object", errors=pasted(text), gpus_seen=[{"tool": "isa", "gfx": "gfx1036"}])
    assert f.severity is Severity.FAIL and "integrated" in f.title
    assert f.fix is not None and "HIP_VISIBLE_DEVICES" in f.fix.text and "HSA_OVERRIDE_GFX_VERSION" not in f.fix.text
    # a runtime that reports the target it ran on keeps the same-family reading (rocBLAS's arch line)
    rb = ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : "
          "gfx1036")
    f = one("gpu-code-object", errors=pasted(rb), files=AMD_LIVE, gpus_seen=[{"tool": "rocblas", "gfx": "gfx1036"}])
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.title
    # a discrete GPU known only from a mention keeps the override advice
    f = one("gpu-code-object", errors=pasted(text), gpus_seen=[{"tool": "isa", "gfx": "gfx1031"}])
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.title


def test_invalid_device_function_is_read_as_a_user_typed_it() -> None:
    # legacy-rocm-build#5264: the issue form's `HIP error: Invalid device function`
    f = one("gpu-code-object", errors=pasted("VAEEncode\nHIP error: Invalid device function"))
    assert f.severity is Severity.FAIL
