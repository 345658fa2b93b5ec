from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests import interpreter_speed

# The tests neither write the developer's cache (~/.cache/rocm-triton-doctor: install logs, the last smoke results)
# nor read it: `check` reads the saved smoke results (check/probes/smoke_history.py). A test that needs the default
# location removes the variable itself.
os.environ.setdefault("RTD_CACHE_DIR", tempfile.mkdtemp(prefix="rtd-test-cache-"))

# One compute thread a test process. `pytest -n 3` runs three workers on CI's two cores, and each torch started an
# OpenMP pool as wide as the machine, whose threads spun against the other workers: on the 2-core dev box the kernel
# tests took about a fifth more CPU and wall time that way (test_row_grads, test_layernorm, test_attention_backward
# and test_linear_cross_entropy under -n 3: 91.6 CPU-s / 49.4 s, 70.6 / 39.7 with one thread). The CLI's
# subprocesses inherit it; a value the caller set wins.
if "OMP_NUM_THREADS" not in os.environ:
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    if "torch" in sys.modules:  # imported before this file (by a plugin): its pool is sized already
        sys.modules["torch"].set_num_threads(1)

FIXTURES = Path(__file__).parent / "fixtures"
SCENARIOS = FIXTURES / "scenarios"


@pytest.fixture(autouse=True, scope="session")
def _interpreter_launches_list_builtins_once() -> None:
    """Triton's interpreter re-walks triton.language for builtins at every launch: listed once
    (tests/interpreter_speed.py). Only once Triton is imported: the test modules set TRITON_INTERPRET before they
    import it, and an earlier import here would make every kernel a compiled one."""
    if "triton" in sys.modules:
        interpreter_speed.install()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/fixtures/golden/*.json from the current output (review the diff!)")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def load_scenario(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text())
    return data
