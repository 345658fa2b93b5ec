"""The code-object probe on real bundle bytes (tests/check/codeobject_bytes.py) inside minimal ELF files."""

from __future__ import annotations

import os
import re
import shutil
import struct
import sys
import time
from pathlib import Path

import pytest

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.probes import codeobjects as co

from . import codeobject_bytes as cb

NAVI3 = ["gfx1100", "gfx1101", "gfx1102"]
needs_zstd = pytest.mark.skipif(shutil.which("zstd") is None, reason="no zstd program to write zstd test data")


def lib(path: Path, fatbin: bytes | None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    sections = {".text": b"\xc3" * 64}
    if fatbin is not None:
        sections[".hip_fatbin"] = fatbin
    path.write_bytes(cb.elf(sections))
    return path


def scan(path: Path) -> dict[str, object] | None:
    return co.scan_fatbin(str(path), time.monotonic() + 10)


def test_plain_bundles_every_tu(tmp_path: Path) -> None:
    fat = cb.bundle(NAVI3) + cb.bundle(NAVI3) + cb.bundle(["gfx1100", "gfx90a:xnack-"])
    res = scan(lib(tmp_path / "libtorch_hip.so", fat))
    assert res == {"bundles": 3, "compressed": None, "targets": ["gfx1100", "gfx1101", "gfx1102", "gfx90a:xnack-"],
                   "partial": False, "error": None, "sampled": False}


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("method", ["zlib", pytest.param("zstd", marks=needs_zstd)])
def test_compressed_bundles(tmp_path: Path, version: int, method: str) -> None:
    one = cb.ccob(cb.bundle(["gfx942:sramecc+:xnack-", "gfx950"]), version, method)
    res = scan(lib(tmp_path / "libx.so", one + b"\0" * 100 + one))
    assert res is not None and res["compressed"] == method and res["bundles"] == 2 and not res["partial"]
    assert res["targets"] == ["gfx942:sramecc+:xnack-", "gfx950"]


def test_compressed_v1_has_no_size_so_the_rest_is_marked_partial(tmp_path: Path) -> None:
    res = scan(lib(tmp_path / "libx.so", cb.ccob(cb.bundle(["gfx1030"]), 1)))
    assert res is not None and res["targets"] == ["gfx1030"] and res["partial"] is True


def test_no_section_means_no_hip_code_and_garbage_is_reported(tmp_path: Path) -> None:
    assert scan(lib(tmp_path / "libc10.so", None)) is None
    (tmp_path / "notelf.so").write_bytes(b"hello")
    assert scan(tmp_path / "notelf.so") is None
    bad = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 10**9)
    res = scan(lib(tmp_path / "libbad.so", bad))
    assert res is not None and "implausible entry count" in str(res["error"]) and res["targets"] == []
    corrupt = b"CCOB" + struct.pack("<HHQQQ", 3, 0, 4096, 9999, 0) + b"not zlib data" * 20
    res = scan(lib(tmp_path / "libcorrupt.so", corrupt))
    assert res is not None and "zlib" in str(res["error"])


def test_target_ids_from_names() -> None:
    assert co.target_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+") == "gfx90a:sramecc+:xnack-"
    assert co.target_id("Kernels.so-000-gfx90a-xnack-.hsaco") == "gfx90a:xnack-"
    assert co.target_id("TensileLibrary_lazy_gfx1100.dat") == "gfx1100"
    assert co.target_id("torch_gfx90a:xnack+.kpack") == "gfx90a:xnack+"
    assert co.target_id("hipv4-amdgcn-amd-amdhsa--gfx11-generic") == "gfx11-generic"
    assert co.target_id("rocm_sdk_libraries_gfx110X_dgpu") is None  # a TheRock family name is not a target


def fake_torch(site: Path, fatbin_targets: list[str]) -> Path:
    torch = site / "torch"
    lib(torch / "lib" / "libtorch_hip.so", cb.bundle(fatbin_targets) * 2)
    lib(torch / "lib" / "libc10.so", None)
    for d, names in {"lib/rocblas/library": ["TensileLibrary_lazy_gfx1100.dat", "Kernels.so-000-gfx1100.hsaco",
                                             "TensileLibrary_lazy_gfx1101.dat"],
                     "lib/hipblaslt/library": ["TensileLibrary_gfx1100.co", "extop_gfx1100.co"],
                     "share/miopen/db": ["gfx110030.kdb", "gfx90a6e.kdb"]}.items():
        (torch / d).mkdir(parents=True, exist_ok=True)
        for n in names:
            (torch / d / n).write_bytes(b"x")
    return torch


def test_audit_of_a_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fake_torch(tmp_path / "site", NAVI3)
    roots = co.stack_roots({"distributions": {"torch": {"location": str(tmp_path / "site")}}})
    res = co.audit(roots, knowledge.all_gfx())
    assert [(x["path"], x["targets"]) for x in res["libraries"]] == [("torch/lib/libtorch_hip.so", NAVI3)]
    assert res["shared_objects"] == 2
    assert {t["lib"]: t["targets"] for t in res["tensile"]} == {"rocblas": ["gfx1100", "gfx1101"], "hipblaslt": ["gfx1100"]}
    assert res["miopen"][0]["targets"] == ["gfx1100", "gfx90a"]
    # cached by (size, mtime): a second run reads no library ...
    monkeypatch.setattr(co, "scan_fatbin", lambda *a: pytest.fail("re-read a cached library"))
    assert co.audit(roots, knowledge.all_gfx())["libraries"][0]["targets"] == NAVI3
    # ... until the file changes
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lib(tmp_path / "site/torch/lib/libtorch_hip.so", cb.bundle(["gfx1103"]))
    os.utime(tmp_path / "site/torch/lib/libtorch_hip.so", ns=(1, 1))
    assert co.audit(roots, knowledge.all_gfx())["libraries"][0]["targets"] == ["gfx1103"]


def test_kpack_names(tmp_path: Path) -> None:
    d = tmp_path / "_rocm_sdk_libraries" / "lib" / ".kpack"
    d.mkdir(parents=True)
    for n in ("torch_gfx90a:xnack+.kpack", "torch_gfx90a:xnack-.kpack", "torch_gfx942.kpack"):
        (d / n).write_bytes(b"KPAK")
    res = co.audit([str(tmp_path / "_rocm_sdk_libraries")], use_cache=False)
    assert res["kpack"][0]["targets"] == ["gfx90a:xnack+", "gfx90a:xnack-", "gfx942"]


def test_two_seconds_on_a_large_library(tmp_path: Path) -> None:
    """libtorch_hip.so holds one bundle per translation unit (thousands); headers only, within the budget."""
    tu = cb.bundle(["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", *NAVI3, "gfx1200", "gfx1201"])
    big = lib(tmp_path / "torch" / "lib" / "libtorch_hip.so", tu * 3000)
    assert big.stat().st_size > 3000 * 4096
    t0 = time.monotonic()
    res = co.audit([str(tmp_path / "torch")], use_cache=False)
    assert time.monotonic() - t0 < 2.0
    entry = res["libraries"][0]
    assert entry["bundles"] == 3000 and not entry["partial"] and len(entry["targets"]) == 12


def test_this_machines_torch() -> None:
    """The CPU torch this project's tests run with: no .hip_fatbin anywhere, found quickly."""
    torch_dir = next((Path(p) / "torch" for p in sys.path if (Path(p) / "torch" / "lib").is_dir()), None)
    if torch_dir is None or not re.search(r"^hip\b.*= None$", (torch_dir / "version.py").read_text(), re.M):
        pytest.skip("no CPU torch in this interpreter")
    res = co.audit([str(torch_dir)], use_cache=False)
    assert res["libraries"] == [] and res["shared_objects"] > 0 and res["elapsed_s"] < 2.0


def test_partial_reads_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lib(tmp_path / "torch" / "lib" / "libtorch_hip.so", cb.bundle(NAVI3) * 50)
    monkeypatch.setattr(co, "TIME_BUDGET_S", -1.0)  # the budget is spent before the first bundle
    first = co.audit([str(tmp_path / "torch")])["libraries"][0]
    assert first["partial"] and first["targets"] == []
    monkeypatch.setattr(co, "TIME_BUDGET_S", 10.0)
    again = co.audit([str(tmp_path / "torch")])["libraries"][0]
    assert not again["partial"] and again["targets"] == NAVI3
