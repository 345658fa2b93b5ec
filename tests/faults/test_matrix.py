"""The fault matrix's core cells (issue #18): each (fault, command) runs the real doctor in a subprocess and must end
on contract — the expected exit code, no traceback, one clear line for errors, no secret printed, nothing harmed."""

from __future__ import annotations

import pytest

from tests.faults.engine import Case, Fixtures, Result, problems
from tests.faults.matrix import core

CASES = core()


@pytest.mark.fault_matrix
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cell(case: Case, matrix_results: dict[str, Result], fx: Fixtures) -> None:
    res = matrix_results[case.id]
    assert not problems(res, fx), "\n".join(problems(res, fx))
