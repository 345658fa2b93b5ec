"""The knowledge the plans stand on: every row has a source and a date, and the audit's corrections hold."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rocm_triton_doctor import knowledge

FILES = ("gfx.json", "rocm_releases.json", "torch_releases.json", "rocm_indexes.json", "triton_codegen.json")


def rows(name: str) -> list[dict[str, object]]:
    data = json.loads(resources.files("rocm_triton_doctor.knowledge").joinpath("data", name).read_text())
    if name == "gfx.json":
        return [*data["targets"], *data["overrides"]]
    if name == "rocm_indexes.json":
        return [*data["indexes"].values(), *(b for r in data["indexes"].values() for b in r.get("by_torch", ()))]
    return list(data["releases" if "releases" in data else "issues"])


@pytest.mark.parametrize("name", FILES)
def test_every_row_has_source_and_date(name: str) -> None:
    for r in rows(name):
        assert r.get("source"), r
        assert str(r.get("as_of", "")).startswith("20"), r


def test_unverified_rows_stay_marked() -> None:
    assert knowledge.torch_release("2.15.0").unverified  # type: ignore[union-attr]
    override = next(r for r in knowledge.override_rules("gfx1150") if r.target == "gfx1100")
    assert not override.verified and "UNVERIFIED" in override.source
    assert knowledge.gfx_info("gfx1154").verified is False  # type: ignore[union-attr]


def test_audit_corrections() -> None:
    rel = knowledge.torch_release("2.14")
    assert rel is not None and rel.torch == "2.14.1" and "rocm7.14" in rel.rocm_indexes
    assert (rel.triton_rocm_package, rel.triton) == ("triton-rocm", "3.8.0")
    assert rel.supports_python("3.15.0") and rel.version_on("rocm7.2") == "2.14.0" and rel.version_on("rocm7.14") == "2.14.1"
    # arch lists by (torch release, index): gfx1103 only in later rocm7.2 builds, never gfx900/906 on rocm7.14
    assert "gfx1103" not in (knowledge.index_arches("rocm7.2", "2.11.0") or ())
    assert "gfx1103" in (knowledge.index_arches("rocm7.2", "2.14.0") or ())
    assert "gfx1103" not in (knowledge.index_arches("rocm7.2") or ())  # unknown release: never promise it
    assert {"gfx900", "gfx906"}.isdisjoint(knowledge.index_arches("rocm7.14") or ("gfx900",))
    assert not knowledge.index_bundles_rocm("rocm7.14") and knowledge.index_bundles_rocm("rocm7.2")
    # TheRock: supported (Release-Ready) and built-only kept apart
    r714 = knowledge.rocm_release("7.14.0")
    assert r714 is not None and "gfx906" not in r714.gfx and "gfx906" in r714.gfx_build_only and "gfx906" in r714.gfx_builds
    assert "gfx1103" in r714.gfx
    assert knowledge.gfx_info("gfx1250").wave_size == 32  # type: ignore[union-attr]
    assert knowledge.gfx_from_target_version(110504) == "gfx1154" and knowledge.gfx_info("gfx1154") is not None
    for pci, gfx in (("0x687f", "gfx900"), ("0x6863", "gfx900"), ("0x7424", "gfx1034"), ("0x13fe", "gfx1013"),
                     ("0x73e1", "gfx1032"), ("0x66a3", "gfx906")):
        assert knowledge.pci_lookup(pci).gfx == gfx  # type: ignore[union-attr]
    assert "gfx906" not in (knowledge.rocm_release("5.7.0").gfx_deprecated)  # type: ignore[union-attr]
