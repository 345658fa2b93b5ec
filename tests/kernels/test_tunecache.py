"""The per-device autotune cache (kernels/tunecache.py) and `smoke --tune`'s selection (smoke/tune.py), without a GPU:
timing and correctness are stood in for, the cache file and the rules are real."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rocm_triton_doctor.kernels import tunecache
from rocm_triton_doctor.kernels.policy import Target
from rocm_triton_doctor.smoke import tune

GPU = Target("cuda", "sm_90", 32)
IDENT = {"device": "NVIDIA H100", "target": "cuda:sm_90:wave32", "triton": "3.6.0", "torch": "2.11", "tool": "0.1"}


@pytest.fixture(autouse=True)
def fresh(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("RTD_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RTD_TUNE_CACHE", raising=False)
    tunecache.deactivate()
    yield tmp_path
    tunecache.deactivate()


def test_round_trip_and_the_file_depends_on_the_device_identity() -> None:
    path = tunecache.activate(IDENT)
    tunecache.store("gemm", ("bf16", 1000, 1000, 1000), {"BLOCK_M": 64}, 12.0, 45.0)
    assert tunecache.save(IDENT) == path and path.exists()
    tunecache.deactivate()
    tunecache.activate(IDENT)
    assert tunecache.lookup("gemm", ("bf16", 1000, 1000, 1000)) == {"BLOCK_M": 64}
    assert tunecache.lookup("gemm", ("bf16", 1000, 1000, 1001)) is None
    other = tunecache.path_for({**IDENT, "triton": "3.7.0"})
    assert other != path  # a Triton upgrade reads another file: stale entries are never applied


def test_off_switch_forced_configs_and_last_key(monkeypatch: pytest.MonkeyPatch) -> None:
    tunecache.activate(IDENT)
    tunecache.store("gemm", ("k",), {"BLOCK_M": 64}, 1.0, 2.0)
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")
    assert tunecache.lookup("gemm", ("k",)) is None
    monkeypatch.delenv("RTD_TUNE_CACHE")
    with tunecache.forced("gemm", {"BLOCK_M": 32}):
        assert tunecache.lookup("gemm", ("k",)) == {"BLOCK_M": 32}
    with tunecache.forced("gemm", None):  # the policy, ignoring the cache
        assert not tunecache.lookup("gemm", ("k",))
    assert tunecache.lookup("gemm", ("k",)) == {"BLOCK_M": 64}
    assert tunecache.last_key("gemm") == ("k",)


def test_the_interpreter_never_reads_the_cache() -> None:
    assert tunecache.lookup("gemm", ("k",), Target("interpreter", "cpu", 1)) is None
    assert tunecache.entries() == {}


def test_a_corrupt_file_or_a_bad_entry_is_dropped_with_a_warning() -> None:
    path = tunecache.path_for(IDENT)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.warns(UserWarning, match="unreadable tune cache"):
        tunecache.activate(IDENT)
    assert tunecache.lookup("gemm", ("k",)) is None
    path.write_text(json.dumps({"schema": tunecache.SCHEMA, "identity": IDENT,
                                "entries": {"gemm": {"k": {"config": {"BLOCK_M": 3}}}}}))
    tunecache.activate(IDENT)

    def check(cfg: dict[str, Any]) -> None:
        if cfg["BLOCK_M"] & (cfg["BLOCK_M"] - 1):
            raise ValueError("BLOCK_M must be a power of two")

    tunecache.register_validator("gemm", check)
    with pytest.warns(UserWarning, match="dropping tune cache entry"):
        assert tunecache.lookup("gemm", ("k",)) is None
    assert tunecache.entries()["gemm"] == {}


def _fake_case(times: dict[int, float], wrong: set[int]) -> Any:
    """A case whose 'kernel' asks the cache for its config; its time and correctness depend on BLOCK_M."""
    state: dict[str, Any] = {}

    def run(inputs: Any, out: Any) -> Any:
        cfg = tunecache.lookup("fake", ("bf16", 7))
        state["cfg"] = (cfg or {}).get("BLOCK_M", 0)
        return out

    case = SimpleNamespace(kernel="fake", name="bf16 7", id="fake[bf16 7]", dtype=None, run=run,
                           setup=lambda dev, gen: {}, out_shape=lambda x: (1,))
    timing = SimpleNamespace(bench=lambda fn: (fn(), SimpleNamespace(median_ms=times[state["cfg"]]))[1])
    correctness = SimpleNamespace(check_case=lambda c, *a, **k: (c.run({}, None),
                                                                  SimpleNamespace(ok=state["cfg"] not in wrong))[1])
    return case, timing, correctness, state


def _torch_stub() -> Any:
    return SimpleNamespace(Generator=lambda device: SimpleNamespace(manual_seed=lambda s: None),
                           empty=lambda *a, **k: None, cuda=SimpleNamespace(empty_cache=lambda: None))


@pytest.mark.parametrize("times,wrong,stored", [
    ({0: 10.0, 16: 9.9, 32: 5.0, 64: 4.0}, {64}, 32),   # the fastest candidate is wrong: never stored
    ({0: 10.0, 16: 9.9, 32: 9.8, 64: 9.75}, set(), None),  # under 3 % better: the policy stays
    ({0: 10.0, 16: 2.0, 32: 5.0, 64: 4.0}, set(), 16),
])
def test_tune_keeps_the_fastest_correct_candidate_that_beats_the_policy(
        monkeypatch: pytest.MonkeyPatch, times: dict[int, float], wrong: set[int], stored: int | None) -> None:
    case, timing, correctness, _ = _fake_case(times, wrong)
    monkeypatch.setattr(tune, "candidates_for", lambda k: lambda key: [{"BLOCK_M": b} for b in (16, 32, 64)])
    import rocm_triton_doctor.smoke as smoke_pkg

    monkeypatch.setattr(smoke_pkg, "timing", timing, raising=False)  # `from rocm_triton_doctor.smoke import timing`
    monkeypatch.setattr(smoke_pkg, "correctness", correctness, raising=False)
    monkeypatch.setattr(tunecache, "device_identity", lambda name, target: IDENT)
    done = tune.tune([case], None, GPU, "NVIDIA H100", _torch_stub())
    got = tunecache.lookup("fake", ("bf16", 7))
    assert (got or {}).get("BLOCK_M") == stored
    assert done["tuned"][0]["tried"] == 3 - len(wrong)
    saved = json.loads(Path(done["path"]).read_text())
    assert saved["identity"] == IDENT and ("fake" in saved["entries"]) == (stored is not None)
