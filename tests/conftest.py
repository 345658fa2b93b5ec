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


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def load_scenario(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text())
    return data
