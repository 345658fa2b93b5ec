"""Install from each 2026 source's layout, served on 127.0.0.1 with real pip: TheRock's flat multi-arch index with
device extras, AMD's flat wheel directory (find-links), an unreachable index and a corrupt download. The env is never
half-changed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.install import executor
from rocm_triton_doctor.install.plan import NoWheel, Options, make_plan

from . import wheelhouse
from .test_plan_triton import amd_facts, with_dists, with_gpus
from .. import venvs

PY = ".".join(map(str, sys.version_info[:3]))
TR = "2.14.0+rocm7.14.0"


@pytest.fixture(autouse=True)
def isolated_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)


def wheel(out: Path, name: str, version: str, requires: tuple[str, ...] = (), extras: tuple[str, ...] = (),
          files: dict[str, str] | None = None) -> Path:
    """Like wheelhouse.make_wheel, plus Provides-Extra (TheRock's torch declares one extra per device)."""
    path = wheelhouse.make_wheel(out, name, version, requires, files)
    if extras:
        with zipfile.ZipFile(path) as z:
            entries = {n: z.read(n).decode() for n in z.namelist()}
        meta = next(n for n in entries if n.endswith("/METADATA"))
        entries[meta] += "".join(f"Provides-Extra: {e}\n" for e in extras)
        rec = next(n for n in entries if n.endswith("/RECORD"))
        entries[rec] = "".join(ln + "\n" for ln in entries[rec].splitlines() if not ln.startswith(meta + ","))
        with zipfile.ZipFile(path, "w") as z:
            for n, c in entries.items():
                z.writestr(n, c)
    return path


def therock_wheels(out: Path) -> Path:
    devices = ("gfx1031", "gfx1100", "gfx942")
    out.mkdir(parents=True, exist_ok=True)
    wheel(out, "torch", TR, ("triton==3.6.0+rocm7.14.0", *(f'amd-torch-device-{g}=={TR}; extra == "device-{g}"' for g in devices)),
          tuple(f"device-{g}" for g in devices), wheelhouse.fake_torch(TR, (), hip="7.14.60850"))
    wheel(out, "triton", "3.6.0+rocm7.14.0", files={"triton/__init__.py": "v = 'rocm'\n"})
    for g in devices:
        wheel(out, f"amd-torch-device-{g}", TR, files={f"torch/lib/.kpack/torch_{g}.kpack": "KPAK"})
    wheel(out, "torch", "2.9.1+rocm6.4", ("pytorch-triton-rocm==3.5.1",), files=wheelhouse.fake_torch("2.9.1+rocm6.4", ()))
    wheel(out, "pytorch-triton-rocm", "3.5.1", files={"triton/__init__.py": "v = 'old'\n"})
    return out


def write_index(wheels: Path, root: Path, hashes: bool = True) -> str:
    """PEP 503 with sha256 fragments (pip checks them), one page per project."""
    by: dict[str, list[Path]] = {}
    for w in sorted(wheels.glob("*.whl")):
        by.setdefault(wheelhouse.norm(w.name.split("-")[0]), []).append(w)
    for name, ws in by.items():
        (root / "simple" / name).mkdir(parents=True, exist_ok=True)
        links = "".join(f'<a href="/files/{w.name}' + (f'#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}' if hashes else "")
                        + f'">{w.name}</a><br>\n' for w in ws)
        (root / "simple" / name / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    (root / "files").mkdir(exist_ok=True)
    for w in wheels.glob("*.whl"):
        (root / "files" / w.name).write_bytes(w.read_bytes())
    return str(root)


def venv(path: Path, index: str, *reqs: str) -> str:
    py = venvs.make(path)
    if reqs:
        subprocess.run([py, "-m", "pip", "install", "-q", "--index-url", index, *reqs], check=True, timeout=300)
    return py


def test_therock_extras_for_every_gpu_and_the_old_triton_goes(tmp_path: Path) -> None:
    root = write_index(therock_wheels(tmp_path / "w"), tmp_path / "idx")
    with wheelhouse.serve(Path(root)) as url:
        py = venv(tmp_path / "env", url, "torch==2.9.1+rocm6.4")
        f = with_dists(with_gpus(amd_facts(), ("gfx1031", "gfx1100")), executor.freeze(py))
        plan = replace(make_plan(f, Options(source="therock", index_url=url), PY, sys.executable), python=py)
        assert plan.source == "therock" and "gfx1031" in plan.source_why
        assert plan.installs[:2] == ["torch[device-gfx1031,device-gfx1100]==2.14.*", "triton"]
        assert {s.name for s in plan.removals} == {"pytorch-triton-rocm"}
        executor.apply(plan)
    got = executor.freeze(py)
    assert got["torch"] == TR and got["triton"] == "3.6.0+rocm7.14.0" and "pytorch-triton-rocm" not in got
    assert {"amd-torch-device-gfx1031", "amd-torch-device-gfx1100"} <= set(got) and "amd-torch-device-gfx942" not in got


def test_auto_prefers_therock_native_over_an_override_for_gfx1031() -> None:
    plan = make_plan(with_gpus(amd_facts(), ("gfx1031",)), Options(), "3.12.3", sys.executable)
    assert plan.source == "therock" and plan.env == {} and plan.expected_gfx == ["gfx1031"]
    assert "no download.pytorch.org wheel carries gfx1031 natively" in plan.source_why
    py315 = make_plan(with_gpus(amd_facts(), ("gfx1031",)), Options(), "3.15.0", sys.executable)  # TheRock: <= 3.14
    assert py315.source == "pytorch" and py315.env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    gfx1100 = make_plan(with_gpus(amd_facts(), ("gfx1100",)), Options(), "3.12.3", sys.executable)
    assert gfx1100.source == "pytorch" and "rocm7.14" in gfx1100.source_why


def test_therock_refuses_an_unknown_gfx_rather_than_a_missing_extra() -> None:
    f = with_gpus(amd_facts(), ("gfx1100",))
    g = replace((f.gpus.value or ())[0], gfx=None, effective_gfx=None)
    f = replace(f, gpus=replace(f.gpus, value=(*(f.gpus.value or ()), g)))
    with pytest.raises(NoWheel, match="TheRock's multi-arch wheels cannot serve"):
        make_plan(f, Options(source="therock"), "3.12.3", sys.executable)


def test_amd_repo_flat_directory(tmp_path: Path) -> None:
    flat = tmp_path / "rocm-rel-7.2"
    flat.mkdir()
    wheel(flat, "torch", "2.9.1+rocm7.2.0.git1ded221d", ("triton==3.5.1+rocm7.2.0",), files=wheelhouse.fake_torch("2.9.1", ()))
    wheel(flat, "triton", "3.5.1+rocm7.2.0", files={"triton/__init__.py": ""})
    (flat / "index.html").write_text("".join(f'<a href="{w.name}">{w.name}</a>\n' for w in flat.glob("*.whl")))
    empty = tmp_path / "empty" / "simple"
    empty.mkdir(parents=True)
    snap_f = with_gpus(amd_facts(), ("gfx1100",))
    rocm = replace(snap_f.rocm, value=replace(snap_f.rocm.value, version="7.2.0"))  # type: ignore[type-var]
    f = with_dists(replace(snap_f, rocm=rocm), {})
    with wheelhouse.serve(flat) as url:
        base = url.rsplit("/simple", 1)[0]
        plan = make_plan(f, Options(source="amd-repo", find_links=base + "/", index_url=base + "/nothing/", venv=str(tmp_path / "e")),
                         "3.12.3", sys.executable)
        assert plan.source == "amd-repo" and plan.installs[:2] == ["torch==2.9.1", "triton==3.5.1"]
        assert knowledge.install_sources()["amd-repo"]["url"].format(rocm="7.2") in make_plan(
            f, Options(source="amd-repo"), "3.12.3", sys.executable).find_links  # type: ignore[operator]
        out = executor.apply(plan)
    assert executor.freeze(out.python)["torch"] == "2.9.1+rocm7.2.0.git1ded221d"
    with pytest.raises(NoWheel, match="needs a system ROCm"):
        make_plan(replace(f, rocm=replace(f.rocm, value=None)), Options(source="amd-repo"), "3.12.3", sys.executable)


def test_unreachable_index_and_corrupt_download_change_nothing(tmp_path: Path) -> None:
    wheels = therock_wheels(tmp_path / "w")
    root = write_index(wheels, tmp_path / "idx", hashes=False)
    with wheelhouse.serve(Path(root)) as url:
        py = venv(tmp_path / "env", url, "torch==2.9.1+rocm6.4")
        before = executor.freeze(py)
        f = with_dists(with_gpus(amd_facts(), ("gfx1100",)), before)
        dead = replace(make_plan(f, Options(source="therock", index_url="http://127.0.0.1:9/simple"), PY, sys.executable), python=py)
        with pytest.raises(executor.InstallFailed, match="nothing was changed"):
            executor.apply(dead)
        assert executor.freeze(py) == before
        # the torch wheel on the server is now garbage (no hash in the index: pip finds out when it installs it)
        torch_file = next((Path(root) / "files").glob(f"torch-{TR}-*.whl"))
        torch_file.write_bytes(b"PK\x03\x04 this is not a wheel" * 100)
        bad = replace(make_plan(f, Options(source="therock", index_url=url), PY, sys.executable), python=py)
        assert bad.removals  # the old Triton would be removed: the rollback must bring it back
        with pytest.raises(executor.InstallFailed):
            executor.apply(bad)
    assert executor.freeze(py) == before
    assert subprocess.run([py, "-c", "import triton, torch"], capture_output=True).returncode == 0
