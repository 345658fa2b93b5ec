from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

# The tests neither write the developer's cache (~/.cache/rocm-triton-doctor: install logs, the last smoke results)
# nor read it: `check` reads the saved smoke results (check/probes/smoke_history.py). A test that needs the default
# location removes the variable itself.
os.environ.setdefault("RTD_CACHE_DIR", tempfile.mkdtemp(prefix="rtd-test-cache-"))

FIXTURES = Path(__file__).parent / "fixtures"
SCENARIOS = FIXTURES / "scenarios"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/fixtures/golden/*.json from the current output (review the diff!)")


# Under `--dist loadgroup` (README's test command) the tests that share an expensive module- or session-scoped
# fixture stay on one pytest-xdist worker: the fault matrix runs all its cells in one session fixture, the install
# tests and the toy model build their venvs / model once a module, the corpus is scored once. Every other test is
# handed out on its own, so the workers finish close together (whole files had left one worker running alone).
XDIST_GROUPS = {"faults/": "faults", "install/test_install.py": "install", "smoke/test_model.py": "model",
                "check/test_corpus.py": "corpus"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        rel = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        group = next((g for prefix, g in XDIST_GROUPS.items() if rel.startswith(prefix)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def load_scenario(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text())
    return data
