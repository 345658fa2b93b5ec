"""The plan always installs the Triton torch pins and removes every other distribution that provides `triton/`,
in the same transaction (issue #15, knowledge-audit §2 'Plans that would install something harmful', item 1)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.facts import Distribution, Facts, Fact, Status, build_facts
from rocm_triton_doctor.install import executor
from rocm_triton_doctor.install.plan import (TRITON_PROVIDERS, BadOption, NoWheel, Options, make_plan,
                                             wrong_platform_index)

from . import wheelhouse
from ..conftest import load_scenario
from .. import venvs

AMD = "rx7900xtx-healthy"


def with_dists(facts: Facts, dists: dict[str, str], torch_requires: tuple[str, ...] = ()) -> Facts:
    """`facts` whose Python environment holds exactly `dists` (name -> version)."""
    base = facts.python.value
    assert base is not None
    ds = {n: Distribution(n, v, torch_requires if n == "torch" else ()) for n, v in dists.items()}
    env = replace(base, distributions=ds, triton_owners=tuple(n for n in ds if n in TRITON_PROVIDERS))
    return replace(facts, python=Fact(Status.FOUND, env, "test"))


def with_gfx(facts: Facts, gfx: str) -> Facts:
    gpus = facts.gpus.value or ()
    one = replace(gpus[0], gfx=gfx, effective_gfx=gfx, info=knowledge.gfx_info(gfx), integrated=None)
    return replace(facts, gpus=Fact(Status.FOUND, (one,), "test"))


def amd_facts() -> Facts:
    snap = load_scenario(AMD)
    snap.pop("runtime", None)
    return build_facts(snap)


UPGRADE_FROM = {"torch": "2.9.1+rocm6.4", "pytorch-triton-rocm": "3.5.1"}


def test_upgrade_291_to_214_removes_the_old_rocm_triton_and_pins_the_new() -> None:
    f = with_dists(amd_facts(), UPGRADE_FROM, ("pytorch-triton-rocm==3.5.1",))
    plan = make_plan(f, Options(), "3.12.3", sys.executable)
    assert plan.torch_version.startswith("2.14.")
    assert plan.triton == "triton-rocm==3.8.0"
    assert "triton-rocm==3.8.0" in plan.installs
    assert [s.name for s in plan.removals] == ["pytorch-triton-rocm"]


@pytest.mark.parametrize("extra", ["triton", "amd-triton", "pytorch-triton", "triton-rocm"])
def test_every_other_provider_goes_and_the_kept_one_is_reinstalled_clean(extra: str) -> None:
    f = with_dists(amd_facts(), {**UPGRADE_FROM, extra: "3.5.0"})
    plan = make_plan(f, Options(), "3.12.3", sys.executable)
    removed = {s.name for s in plan.removals}
    assert removed >= {"pytorch-triton-rocm", extra}
    if extra == "triton-rocm":  # the pinned name itself shares triton/ with another: reinstalled, not kept as is
        assert "triton-rocm==3.8.0" in plan.installs


def test_unknown_pin_removes_every_triton_so_torch_brings_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    f = with_dists(amd_facts(), UPGRADE_FROM)
    real = knowledge.torch_release
    monkeypatch.setattr(knowledge, "torch_release",
                        lambda v: replace(r, triton_rocm_package=None) if (r := real(v)) else None)
    plan = make_plan(f, Options(), "3.12.3", sys.executable)
    assert plan.triton is None and [s.name for s in plan.removals] == ["pytorch-triton-rocm"]
    assert not any(i.split("==")[0] in TRITON_PROVIDERS for i in plan.installs)


def test_other_patch_pins_name_only() -> None:
    f = with_dists(amd_facts(), {})
    plan = make_plan(f, Options(torch="2.12.0"), "3.12.3", sys.executable)
    assert "triton-rocm" in plan.installs and plan.triton is None  # 2.12.0 pins 3.7.0, the row records 2.12.1's 3.7.1


def test_cuda_index_on_an_amd_box_is_refused() -> None:
    f = amd_facts()
    for url in ("https://download.pytorch.org/whl/cpu", "https://download.pytorch.org/whl/cu128/",
                "https://download.pytorch.org/whl/nightly/cu130"):
        assert wrong_platform_index(url)
        with pytest.raises(BadOption, match="CPU/CUDA"):
            make_plan(f, Options(index_url=url), "3.12.3", sys.executable)
    assert not wrong_platform_index("https://download.pytorch.org/whl/rocm7.14")
    assert not wrong_platform_index("http://127.0.0.1:8080/simple")


def _final_tritons(plan_installs: list[str], removed: set[str], before: dict[str, str]) -> set[str]:
    left = {n for n in before if n in TRITON_PROVIDERS and n not in removed}
    return left | {i.split("==")[0] for i in plan_installs if i.split("==")[0] in TRITON_PROVIDERS}


GFX = ["gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1031", "gfx1032", "gfx1100", "gfx1101",
       "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201"]
ENVS = [{}, UPGRADE_FROM, {"torch": "2.9.1", "triton": "3.5.1"}, {**UPGRADE_FROM, "triton": "3.5.1"},
        {"torch": "2.13.0+rocm7.2", "triton-rocm": "3.7.1", "amd-triton": "3.6.0"},
        {"torch": "2.14.1+rocm7.14", "triton-rocm": "3.8.0"}]


def with_gpus(facts: Facts, gfxs: tuple[str, ...]) -> Facts:
    g0 = (facts.gpus.value or ())[0]
    gpus = tuple(replace(g0, node=i + 1, gfx=g, effective_gfx=g, info=knowledge.gfx_info(g),
                         integrated=(knowledge.gfx_info(g).integrated if knowledge.gfx_info(g) else None))  # type: ignore[union-attr]
                 for i, g in enumerate(gfxs))
    return replace(facts, gpus=Fact(Status.FOUND, gpus, "test"))


def test_property_no_plan_leaves_two_tritons_or_a_foreign_index() -> None:
    """Every GPU family (and pairs of them) x Python x starting environment x --source: at most one Triton
    afterwards, never a CPU/CUDA index on an AMD box, and a TheRock plan names the device extra of every GPU."""
    base = amd_facts()
    checked = 0
    machines = [(g,) for g in GFX] + [("gfx1100", "gfx1036"), ("gfx1031", "gfx1100"), ("gfx942",) * 8, ("gfx1151", "gfx1201")]
    for gfxs, py, before, source in itertools.product(machines, ["3.10.14", "3.12.3", "3.13.1", "3.15.0"], ENVS,
                                                      ["auto", "pytorch", "therock"]):
        f = with_dists(with_gpus(base, gfxs), before)
        try:
            plan = make_plan(f, Options(source=source), py, sys.executable)
        except NoWheel:
            continue
        checked += 1
        removed = {s.name for s in plan.removals}
        assert len(_final_tritons(plan.installs, removed, before)) <= 1, (gfxs, py, before, plan.installs, removed)
        assert plan.index_url and not wrong_platform_index(plan.index_url), plan.index_url
        assert plan.source in ("pytorch", "therock") and (source == "auto" or plan.source == source)
        if plan.source == "pytorch":
            assert plan.index and plan.index.startswith("rocm")
        else:
            assert plan.index_url == knowledge.install_sources()["therock"]["url"]
            assert all(f"device-{g}" in plan.installs[0] for g in gfxs), plan.installs
    assert checked > 600


def test_upgrade_for_real_through_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2.9.1+rocm6.4 + pytorch-triton-rocm 3.5.1 -> 2.14.1+rocm7.14 through real pip against a loopback index:
    one owner of triton/ afterwards, and it is triton-rocm 3.8.0."""
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    W = wheelhouse.make_wheel
    W(wheels, "torch", "2.9.1+rocm6.4", ("pytorch-triton-rocm==3.5.1",), wheelhouse.fake_torch("2.9.1+rocm6.4", (), hip="6.4"))
    W(wheels, "pytorch-triton-rocm", "3.5.1", (), {"triton/__init__.py": "v = '3.5.1'\n", "triton/old_only.py": ""})
    W(wheels, "torch", "2.14.1+rocm7.14", ("triton-rocm==3.8.0",), wheelhouse.fake_torch("2.14.1+rocm7.14", (), hip="7.14"))
    W(wheels, "triton-rocm", "3.8.0", (), {"triton/__init__.py": "v = '3.8.0'\n"})
    root = tmp_path / "index"
    wheelhouse.write_index(wheels, root)
    with wheelhouse.serve(root) as url:
        venv = tmp_path / "env"
        py = venvs.make(venv)
        subprocess.run([py, "-m", "pip", "install", "-q", "--index-url", url, "torch==2.9.1+rocm6.4"], check=True, timeout=300)
        f = with_dists(amd_facts(), executor.freeze(py))
        plan = replace(make_plan(f, Options(torch="2.14.1", rocm="7.14", index_url=url), "3.12.3", sys.executable),
                       python=py)
        executor.apply(plan)
    got = executor.freeze(py)
    assert got["torch"] == "2.14.1+rocm7.14" and got["triton-rocm"] == "3.8.0" and "pytorch-triton-rocm" not in got
    site = Path(subprocess.run([py, "-c", "import triton, os; print(os.path.dirname(triton.__file__))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    assert not (site / "old_only.py").exists()  # nothing of the old distribution is left in triton/
