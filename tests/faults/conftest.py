"""Fixtures of the fault matrix: built once per session; the selected cells run together, in parallel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.engine import Case, Fixtures, Result, cleanup, run_all


@pytest.fixture(scope="session")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixtures]:
    f = Fixtures(tmp_path_factory.mktemp("faults"))
    yield f
    cleanup(f)


def selected_cases(request: pytest.FixtureRequest, marker: str) -> list[Case]:
    """The Case objects of the tests this session will run that carry `marker` (so -k runs only those cells)."""
    out = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and item.get_closest_marker(marker) and isinstance(callspec.params.get("case"), Case):
            out.append(callspec.params["case"])
    return out


@pytest.fixture(scope="session")
def matrix_results(request: pytest.FixtureRequest, fx: Fixtures) -> dict[str, Result]:
    return run_all(selected_cases(request, "fault_matrix"), fx)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fault_matrix: a cell of the fault matrix (tests/faults/matrix.py)")
    config.addinivalue_line("markers", "cli_contract: a CLI-contract cell of the fault matrix (test_cli_contract.py)")

