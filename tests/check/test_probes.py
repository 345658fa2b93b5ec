"""Probes: the runner's timeout and the collector's never-raise contract."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rocm_triton_doctor.check.probes.collect import Collector, _strip_credentials
from rocm_triton_doctor.check.probes.runner import run_command


def test_runner_kills_the_whole_process_group() -> None:
    start = time.monotonic()
    res = run_command(["sh", "-c", "sleep 100 & sleep 100"], timeout=0.5)
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - start < 3


def test_runner_missing_and_not_executable(tmp_path: Path) -> None:
    assert run_command(["/definitely/not/here"], timeout=1).missing
    f = tmp_path / "x"
    f.write_text("data")
    res = run_command([str(f)], timeout=1)
    assert res.error and "Permission" in res.error


def test_runner_captures_output() -> None:
    res = run_command([sys.executable, "-c", "import sys; print('hi'); sys.exit(3)"], timeout=10)
    assert (res.returncode, res.stdout.strip()) == (3, "hi")


def test_env_allow_list_drops_secrets_and_credentials() -> None:
    c = Collector(environ={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_2": "11.0.0",
                           "AWS_SECRET_ACCESS_KEY": "x", "HF_TOKEN": "y", "TRITON_CACHE_DIR": "/tmp/t",
                           "PIP_INDEX_URL": "https://user:tok@pypi.example.com/simple"})
    env = c.env()
    assert set(env) == {"HSA_OVERRIDE_GFX_VERSION", "HSA_OVERRIDE_GFX_VERSION_2", "TRITON_CACHE_DIR", "PIP_INDEX_URL"}
    assert env["PIP_INDEX_URL"] == "https://pypi.example.com/simple"
    assert _strip_credentials("not a url") == "not a url"


def test_unreadable_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").mkdir()  # a directory where a file should be
    c = Collector(root=str(tmp_path), runtime=False)
    value = c.read_file("/etc/os-release")
    assert isinstance(value, dict) and "error" in value
    snap = c.collect()
    assert snap["files"]["/proc/version"] is None


def test_runtime_probe_reports_a_broken_torch(tmp_path: Path) -> None:
    """A torch that dies at import becomes data (error text), never a traceback in the doctor."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('libamdhip64.so: cannot open shared object file')\n")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    c = Collector(environ=env, runtime=True, runtime_timeout=60)
    out = c.runtime_probe()
    assert out.get("torch_import_failed") is True
    assert "libamdhip64.so" in str(out.get("error"))


def _fake_torch(tmp_path: Path, version_py: str) -> dict[str, str]:
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('importing this fake torch is a test failure')\n")
    (pkg / "version.py").write_text(version_py)
    return {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}


def test_cpu_build_is_imported_not_guessed_from_version_py(tmp_path: Path) -> None:
    """Issue #18 defect 2: a CPU build used to be recognised from torch/version.py alone, so a torch whose import
    raises was 'runs on the CPU'. Now it is imported like any build, and its static version names it."""
    env = _fake_torch(tmp_path, "from typing import Optional\n__version__ = '2.13.0+cpu'\n"
                                "cuda: Optional[str] = None\nhip: Optional[str] = None\n")
    out = Collector(environ=env, runtime_timeout=60).runtime_probe()
    assert out["torch_import_failed"] is True and out["torch_imported"] is False and "fake torch" in str(out["error"])
    assert out["torch_static_version"] == "2.13.0+cpu" and out["torch_version"] is None


def test_annotated_cuda_version_is_not_mistaken_for_cpu(tmp_path: Path) -> None:
    """torch 2.11 writes `cuda: Optional[str] = '13.0'` (seen on the lent H200): must import, not shortcut."""
    env = _fake_torch(tmp_path, "from typing import Optional\n__version__ = '2.11.0+cu130'\n"
                                "cuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n")
    out = Collector(environ=env, runtime_timeout=60).runtime_probe()
    assert out.get("torch_import_failed") is True and "fake torch" in str(out["error"])


def test_the_probe_lists_the_kfd_nodes_so_a_cpu_only_topology_is_known(tmp_path: Path) -> None:
    # Without the listing, node 0's files alone cannot say whether a GPU node exists (facts/gpus.py): deleting the
    # GPU node's files from a snapshot must never read as "KFD has no GPU node" (tests/check/test_properties.py).
    from rocm_triton_doctor.check.facts import build_facts

    nodes = tmp_path / "sys/class/kfd/kfd/topology/nodes"
    for n, simds in (("0", 0), ("1", 192), ("10", 0)):
        (nodes / n).mkdir(parents=True)
        (nodes / n / "properties").write_text(f"simd_count {simds}\n")
    c = Collector(root=str(tmp_path), runtime=False)
    paths = c.paths()
    assert paths["/sys/class/kfd/kfd/topology/nodes"]["entries"] == ["0", "1", "10"]  # type: ignore[index]
    (nodes / "1" / "properties").unlink()
    (nodes / "1").rmdir()
    snap = c.collect()
    assert build_facts(snap).gpus.status.value == "absent"  # the listing shows every node, all CPU nodes
    assert not Collector(root=str(tmp_path / "nowhere"), runtime=False).paths()["/sys/class/kfd/kfd/topology/nodes"]
