"""The install tests point pip at local indexes, or at a dead one on purpose: no retries (pip's default, 5 with
back-off, made each dead-index test wait ~15 s for nothing)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _pip_no_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_RETRIES", "0")
