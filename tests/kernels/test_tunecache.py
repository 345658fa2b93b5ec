"""The per-device autotune cache (kernels/tunecache.py) and `smoke --tune`'s selection (smoke/tune.py), without a GPU:
timing and correctness are stood in for, the cache file and the rules are real."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from rocm_triton_doctor.kernels import launch as launch_mod
from rocm_triton_doctor.kernels import attention, gemm, policy, tunecache
from rocm_triton_doctor.kernels.gemm_parts import tune_key
from rocm_triton_doctor.kernels.policy import Target
from rocm_triton_doctor.smoke import tune

GPU = Target("cuda", "sm_90", 32)
IDENT = {"device": "NVIDIA H100", "target": "cuda:sm_90:wave32", "triton": "3.6.0", "torch": "2.11", "tool": "0.1"}


@pytest.fixture(autouse=True)
def fresh(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("RTD_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RTD_TUNE_CACHE", raising=False)
    monkeypatch.setattr(tunecache, "_validators", dict(tunecache._validators))  # a test's validator stays in its test
    tunecache.deactivate()
    yield tmp_path
    tunecache.deactivate()


def test_round_trip_and_the_file_depends_on_the_device_identity() -> None:
    path = tunecache.activate(IDENT)
    tunecache.store("demo", ("bf16", 1000, 1000, 1000), {"BLOCK_M": 64}, 12.0, 45.0)
    assert tunecache.save(IDENT) == path and path.exists()
    tunecache.deactivate()
    tunecache.activate(IDENT)
    assert tunecache.lookup("demo", ("bf16", 1000, 1000, 1000)) == {"BLOCK_M": 64}
    assert tunecache.lookup("demo", ("bf16", 1000, 1000, 1001)) is None
    other = tunecache.path_for({**IDENT, "triton": "3.7.0"})
    assert other != path  # a Triton upgrade reads another file: stale entries are never applied


def test_off_switch_forced_configs_and_last_key(monkeypatch: pytest.MonkeyPatch) -> None:
    tunecache.activate(IDENT)
    tunecache.store("demo", ("k",), {"BLOCK_M": 64}, 1.0, 2.0)
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")
    assert tunecache.lookup("demo", ("k",)) is None
    monkeypatch.delenv("RTD_TUNE_CACHE")
    with tunecache.forced("demo", {"BLOCK_M": 32}):
        assert tunecache.lookup("demo", ("k",)) == {"BLOCK_M": 32}
    with tunecache.forced("demo", None):  # the policy, ignoring the cache
        assert not tunecache.lookup("demo", ("k",))
    assert tunecache.lookup("demo", ("k",)) == {"BLOCK_M": 64}
    assert tunecache.last_key("demo") == ("k",)


def test_the_interpreter_never_reads_the_cache() -> None:
    assert tunecache.lookup("demo", ("k",), Target("interpreter", "cpu", 1)) is None
    assert tunecache.entries() == {}


def test_a_corrupt_file_or_a_bad_entry_is_dropped_with_a_warning() -> None:
    path = tunecache.path_for(IDENT)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.warns(UserWarning, match="unreadable tune cache"):
        tunecache.activate(IDENT)
    assert tunecache.lookup("demo", ("k",)) is None
    path.write_text(json.dumps({"schema": tunecache.SCHEMA, "identity": IDENT,
                                "entries": {"demo": {"k": {"config": {"BLOCK_M": 3}}}}}))
    tunecache.activate(IDENT)

    def check(cfg: dict[str, Any]) -> None:
        if cfg["BLOCK_M"] & (cfg["BLOCK_M"] - 1):
            raise ValueError("BLOCK_M must be a power of two")

    tunecache.register_validator("demo", check)
    with pytest.warns(UserWarning, match="dropping tune cache entry"):
        assert tunecache.lookup("demo", ("k",)) is None
    assert tunecache.entries()["demo"] == {}


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


# -- the launchers' hook: gemm() and attention() read the cache on a GPU target, never in the interpreter -----------
TILES = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "SPLIT_K": 1, "num_warps": 4, "num_stages": 2}


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[tuple[str, dict[str, Any]]]:
    """Record what the launcher launches (kernel name, constexpr/launch kwargs) instead of running it."""
    calls: list[tuple[str, dict[str, Any]]] = []
    # gemm and attention launch through launch_site.Site, which calls kernels.launch.launch
    monkeypatch.setattr(module if hasattr(module, "launch") else launch_mod, "launch",
                        lambda fn, grid, *a, **kw: calls.append((fn.fn.__name__, kw)))
    if module is gemm:
        monkeypatch.setattr(gemm, "gemm_tma_kernel", _Indexable(lambda *a, **kw: calls.append(("gemm_tma_kernel", kw))))
    return calls


class _Indexable:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __getitem__(self, grid: Any) -> Any:
        return self.fn


def _gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPU tensors, but the launchers decide as on an H100 (the spies keep anything from running)."""
    monkeypatch.setattr(policy, "target_for_device", lambda device: GPU)


def test_gemm_ignores_the_cache_in_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = torch.randn(40, 72), torch.randn(72, 48)
    tunecache.activate(IDENT)
    tunecache.store("gemm", tune_key(a, b, "none", 0.0, "ieee"), TILES, 1.0, 2.0)
    calls = _spy(monkeypatch, gemm)
    gemm.gemm(a, b)
    interp = policy.gemm_config(policy.target_for_device("cpu"), 40, 48, 72, 4)
    assert [(n, kw["BLOCK_M"], kw["BLOCK_K"]) for n, kw in calls] == [("gemm_kernel", interp["BLOCK_M"], interp["BLOCK_K"])]
    assert interp["BLOCK_M"] != TILES["BLOCK_M"]


def test_gemm_runs_a_cached_config_on_the_pointer_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4096^3 fp16 on an H100: the policy's choice is the persistent TMA kernel (>= GEMM_TMA_MIN_FLOPS); a cached config
    # is a pointer-kernel one.
    a, b = torch.empty(4096, 4096, dtype=torch.float16), torch.empty(4096, 4096, dtype=torch.float16)
    key = tune_key(a, b, "none", 0.0, "ieee")
    assert key == ("float16", 4096, 4096, 4096, "none", False, "ieee", True, True, False, False)
    _gpu(monkeypatch)
    calls = _spy(monkeypatch, gemm)
    tunecache.activate(IDENT)
    gemm.gemm(a, b)
    assert [n for n, _ in calls] == ["gemm_tma_kernel"]
    tunecache.store("gemm", key, TILES, 1.0, 2.0)
    calls.clear()
    gemm.gemm(a, b)
    (name, kw), = calls
    assert name == "gemm_kernel" and {k: kw[k] for k in TILES if k != "SPLIT_K"} == {k: v for k, v in TILES.items()
                                                                                      if k != "SPLIT_K"}
    calls.clear()
    gemm.gemm(a, b, config={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64})  # config= wins over the cache
    assert calls[0][1]["BLOCK_M"] == 64
    calls.clear()
    monkeypatch.setenv("RTD_TUNE_CACHE", "off")
    gemm.gemm(a, b)
    assert [n for n, _ in calls] == ["gemm_tma_kernel"]
    monkeypatch.delenv("RTD_TUNE_CACHE")
    calls.clear()
    with tunecache.forced("gemm", {**TILES, "BLOCK_N": 64}):  # how smoke --tune times a candidate
        gemm.gemm(a, b, bias=torch.empty(4096, dtype=torch.float16), epilogue="bias_relu")
    assert calls[0][1]["BLOCK_N"] == 64 and calls[0][1]["EPILOGUE"] == 2
    assert tunecache.last_key("gemm") == ("float16", 4096, 4096, 4096, "bias_relu") + key[5:]


def test_a_corrupt_cached_gemm_config_is_dropped_and_the_policy_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # fp32 "auto" on an H100 with 500 rows (past policy.FP32_NMAJOR_IEEE_MAX_M): the 3xTF32 split
    a, b = torch.empty(500, 300), torch.empty(300, 200)
    key = tune_key(a, b, "none", 0.0, policy.fp32_dot_precision(GPU))
    _gpu(monkeypatch)
    calls = _spy(monkeypatch, gemm)
    tunecache.activate(IDENT)
    for bad in ({**TILES, "BLOCK_M": 48}, {**TILES, "num_warps": 3}, {**TILES, "FAST": 1}, {**TILES, "num_stages": "2"}):
        tunecache.store("gemm", key, bad, 1.0, 2.0)
        calls.clear()
        with pytest.warns(UserWarning, match="dropping tune cache entry gemm"):
            gemm.gemm(a, b)
        want = policy.gemm_config(GPU, 500, 200, 300, 4, tc=True)
        assert [(n, kw["BLOCK_M"], kw["num_warps"]) for n, kw in calls if n == "gemm_kernel"] == [("gemm_kernel", want["BLOCK_M"],
                                                                              want["num_warps"])]
        assert tunecache.entries()["gemm"] == {}


def test_attention_runs_a_cached_config_on_the_pointer_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    q = torch.empty(1, 4, 8192, 128, dtype=torch.bfloat16)  # 69 GFLOP causal: over policy.TMA_ATTENTION_MIN_FLOPS
    kv = torch.empty(1, 2, 8192, 128, dtype=torch.bfloat16)
    assert policy.attention_kernel(GPU, 128, 4.0 * 4 * 8192 * 8192 * 128 / 2, True) == "tma"  # what auto would take
    _gpu(monkeypatch)
    calls = _spy(monkeypatch, attention)
    tunecache.activate(IDENT)
    cfg = {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
    tunecache.store("attention", ("bfloat16", 2, 8192, 8192, 128, True), cfg, 1.0, 2.0)
    attention.attention(q, kv, kv, causal=True)
    (name, kw), = calls
    assert name == "attn_fwd_kernel" and {k: kw[k] for k in cfg} == cfg
    tunecache.store("attention", ("bfloat16", 2, 8192, 8192, 128, True), {**cfg, "BLOCK_N": 24}, 1.0, 2.0)
    calls.clear()
    with pytest.warns(UserWarning, match="dropping tune cache entry attention"):
        attention.attention(q, kv, kv, causal=True, kernel="pointer")
    want = policy.attention_config(GPU, 128, 2, True)
    (name, kw), = calls
    assert name == "attn_fwd_kernel" and {k: kw[k] for k in want} == want


def test_attention_ignores_the_cache_in_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    q = torch.randn(1, 2, 40, 16)
    tunecache.activate(IDENT)
    tunecache.store("attention", ("float32", 1, 40, 40, 16, False), {"BLOCK_M": 16, "BLOCK_N": 16}, 1.0, 2.0)
    calls = _spy(monkeypatch, attention)
    attention.attention(q, q, q)
    assert calls[0][1]["BLOCK_M"] == policy.attention_config(policy.target_for_device("cpu"), 16, 4)["BLOCK_M"] != 16


@pytest.mark.parametrize("key", [
    ("float16", 16, 4096, 4096, "none", False, "ieee", True, True, False, False),
    ("bfloat16", 8, 14336, 4096, "bias", False, "ieee", True, False, False, False),
    ("float16", 5, 70, 200, "none", False, "ieee", True, True, False, False),  # K too short to split
    ("float32", 1023, 769, 517, "bias_gelu", False, "ieee", True, True, True, True),
    ("bfloat16", 1000, 1000, 1000, "none", False, "ieee", True, True, False, False),
    ("float16", 4096, 4096, 4096, "bias_relu", True, "ieee", True, True, False, False),
])
def test_gemm_tune_candidates_are_valid_configs(key: tuple[Any, ...]) -> None:
    cands = gemm.tune_candidates(key)
    assert 2 <= len(cands) <= 6 and len({tuple(sorted(c.items())) for c in cands}) == len(cands)
    for cfg in cands:
        assert gemm._checked_config(cfg) == {"GROUP_M": 8, "num_warps": 4, **cfg}
        assert cfg["BLOCK_K"] * cfg["SPLIT_K"] * 4 <= max(key[3], cfg["BLOCK_K"] * 4)  # no split of nothing
    if key[1] <= 16:
        assert {c["BLOCK_M"] for c in cands} == {16}


@pytest.mark.parametrize("d", [64, 128, 256])
def test_attention_tune_candidates_are_valid_configs(d: int) -> None:
    cands = attention.tune_candidates(("bfloat16", 4, 4096, 4096, d, True))
    assert len(cands) == (3 if d > 128 else 4)
    for cfg in cands:
        assert attention._checked_config(cfg) == cfg


def test_gemm_decode_candidates_compute_right_in_the_interpreter() -> None:
    """The split-K candidates through the real kernels (the interpreter): a stored one must give the right answer."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(5, 1040, generator=gen, dtype=torch.float16), torch.randn(1040, 70, generator=gen).half() * 0.03
    bias = torch.randn(70, generator=gen).half()
    ref = gemm.reference(a, b, bias, "bias_gelu")
    cands = gemm.tune_candidates(tune_key(a, b, "bias_gelu", 0.0, "ieee"))
    assert {c["SPLIT_K"] for c in cands} == {1, 2, 4}
    for cfg in cands:
        torch.testing.assert_close(gemm.gemm(a, b, bias, "bias_gelu", config=cfg).double(), ref, atol=2e-2, rtol=2e-2)
