"""The knowledge base: encodings derived from ROCm sources, and the integrity of the data files."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rocm_triton_doctor import knowledge


@pytest.mark.parametrize("value,gfx", [(90402, "gfx942"), (90010, "gfx90a"), (90012, "gfx90c"), (100300, "gfx1030"),
                                       (110501, "gfx1151"), (120001, "gfx1201"), (120500, "gfx1250"), (0, None)])
def test_gfx_from_target_version(value: int, gfx: str | None) -> None:
    assert knowledge.gfx_from_target_version(value) == gfx


@pytest.mark.parametrize("value,gfx", [("10.3.0", "gfx1030"), ("11.0.0", "gfx1100"), ("9.0.10", "gfx90a"),
                                       ("11.5.1", "gfx1151"), ("9.4.2", "gfx942")])
def test_parse_override_valid(value: str, gfx: str) -> None:
    assert knowledge.parse_override(value) == (gfx, None)
    assert knowledge.override_value(gfx) == value


@pytest.mark.parametrize("value", ["gfx1030", "1030", "10.3.0x", "10.3", " 10.3.0", "64.0.0", "10.300.0", "", "10.3.16"])
def test_parse_override_invalid(value: str) -> None:
    gfx, why = knowledge.parse_override(value)
    assert gfx is None and why


def test_parse_override_names_a_gfx_name_only_when_it_is_one() -> None:
    assert "is a gfx name" in (knowledge.parse_override("gfx1030")[1] or "")
    # a detector's error text passed on as the value (comfyui-rocm-docker#2) is not a gfx name
    assert "three dot-separated" in (knowledge.parse_override("GFX version detection error")[1] or "")


def test_every_target_is_consistent() -> None:
    for gfx in knowledge.all_gfx():
        t = knowledge.gfx_info(gfx)
        assert t is not None
        assert knowledge.gfx_from_target_version(t.gfx_target_version) == gfx
        assert t.wave_size in (32, 64) and t.kind in ("dgpu", "igpu", "dcgpu") and t.source


def test_pci_ids_are_unique_and_resolve() -> None:
    seen: dict[str, str] = {}
    for gfx in knowledge.all_gfx():
        for pci in knowledge.gfx_info(gfx).pci_ids:  # type: ignore[union-attr]
            assert pci not in seen, f"{pci} listed for {seen.get(pci)} and {gfx}"
            seen[pci] = gfx
    assert knowledge.pci_lookup(0x744C).gfx == "gfx1100"  # type: ignore[union-attr]
    assert knowledge.pci_lookup("0x1586").gfx == "gfx1151"  # type: ignore[union-attr]


def test_every_row_has_a_source_and_every_file_a_date() -> None:
    for name in ("gfx.json", "rocm_releases.json", "torch_releases.json", "rocm_indexes.json"):
        doc = json.loads(resources.files("rocm_triton_doctor.knowledge").joinpath("data", name).read_text())
        assert doc["as_of"] == knowledge.as_of() or doc["as_of"] >= knowledge.as_of()
        rows = doc.get("targets") or doc.get("releases") or list(doc.get("indexes", {}).values())
        assert rows and all(r.get("source") for r in rows), name


def test_rocm_release_matching() -> None:
    assert knowledge.rocm_release("6.4.0").version == "6.4.0"  # type: ignore[union-attr]
    rel = knowledge.rocm_release("6.4.3")  # newest row <= 6.4.3 within 6.4
    assert rel is not None and rel.version == "6.4.1" and "gfx1201" in rel.gfx
    assert knowledge.rocm_release("7.2.4").verified is False  # type: ignore[union-attr]
    assert knowledge.rocm_release("4.5.2") is None
    assert knowledge.rocm_release("garbage") is None


def test_index_arches_and_torch_rows() -> None:
    assert "gfx1151" in knowledge.index_arches("rocm7.2")  # type: ignore[operator]
    assert "gfx1151" not in knowledge.index_arches("rocm6.4")  # type: ignore[operator]
    t = knowledge.torch_release("2.9.1+rocm6.4")
    assert t is not None and t.triton == "3.5.1" and t.triton_rocm_package == "pytorch-triton-rocm"
    assert knowledge.torch_release("2.10.0").triton_rocm_package == "triton-rocm"  # type: ignore[union-attr]
    for r in knowledge.torch_releases():
        for index in r.rocm_indexes:
            assert knowledge.index_arches(index), f"torch {r.torch} names unknown index {index}"


def test_override_rules_prefer_verified_targets() -> None:
    assert knowledge.override_rules("gfx1031")[0].value == "10.3.0"
    assert knowledge.override_rules("gfx1151")[0].target == "gfx1100"
    assert knowledge.override_rules("gfx1100") == ()
