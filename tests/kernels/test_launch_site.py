"""kernels/launch_site.py: a Site launches exactly what launch() would (the same compiled kernel, the same arguments,
tensors as their addresses), keys every changing argument as Triton does (a pointer that loses its 16-byte alignment
or a seed that becomes a multiple of 16 goes back through launch()), keeps no tensor alive, and hands everything it
does not know to launch(). No GPU: the driver and the compiled kernel are recording fakes, as in test_launch.py."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
import torch
from triton.runtime import jit as tjit

from rocm_triton_doctor.kernels import launch
from tests.kernels.helpers import FakeBackend, FakeDriver
from rocm_triton_doctor.kernels.launch_site import DYN, Site


def _kernel(monkeypatch: pytest.MonkeyPatch, record: list[Any]) -> Any:
    import triton.language as tl

    rt = launch._runtime()
    assert rt is not None
    monkeypatch.setattr(rt, "driver", FakeDriver())

    def k(a_ptr, n, seed, BLOCK: tl.constexpr, c_ptr=None, MODE: tl.constexpr = 3):
        pass

    fn = tjit.JITFunction(k)
    fn.device_caches[0] = ({}, {}, None, FakeBackend(), None)

    made: list[int] = []

    def compiled() -> Any:  # each compile its own function handle, so a launch of the wrong kernel shows
        ck = object.__new__(rt.compiled_kernel)
        ck._run = lambda *a: record.append(("fast", a))
        ck.function, ck.packed_metadata, ck.module = f"FUNC{len(made)}", "META", None
        made.append(1)
        return ck

    def slow_run(*args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        record.append(("slow", args, kwargs))
        return compiled()

    monkeypatch.setattr(fn, "run", slow_run)
    return fn


def test_a_site_launches_what_launch_would_with_addresses_for_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    record: list[Any] = []
    fn = _kernel(monkeypatch, record)
    x, y = torch.zeros(64), torch.zeros(32)
    site = Site(fn, (5, 2), (DYN, 100, DYN), {"BLOCK": 64, "c_ptr": DYN, "num_warps": 4})
    site(x, 7, None)  # the kernel's first launch: Triton's path compiles
    assert record[-1][0] == "slow"
    site(x, 9, None)  # launch() finds it (same key: seed 9 and 7 are both unaligned i32), the Site learns it
    assert record[-1] == ("fast", (5, 2, 1, 77, "FUNC0", "META", None, None, None, x, 100, 9, 64, None, 3))
    site(x, 11, y)  # a new key (c_ptr a tensor, not None): launch() again
    assert record[-1][0] == "slow"
    site(x, 13, None)  # the Site's own path: the tensor goes as its address
    assert record[-1] == ("fast", (5, 2, 1, 77, "FUNC0", "META", None, None, None, x.data_ptr(), 100, 13, 64, None, 3))
    site(torch.ones(64), 15, None)  # another tensor, same dtype and alignment: same compiled kernel
    assert record[-1][0] == "fast" and record[-1][1][9] != x.data_ptr()
    n = len(record)
    site(x, 16, None)  # a seed that is a multiple of 16 is another specialisation to Triton
    assert record[n][0] == "slow"
    site(x[1:], 17, None)  # a pointer off 16-byte alignment: another specialisation
    assert record[-1][0] == "slow"
    site(x.to(torch.float16), 19, None)  # another dtype
    assert record[-1][0] == "slow"
    site(x, 1, None)  # 1 is a constant to Triton
    assert record[-1][0] == "slow"


def test_a_site_keys_as_launch_does_on_random_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call through the Site launches the same compiled kernel with the same values (tensors by address) as
    launch() with the same arguments: compared on the recorded launches of random argument mixes."""
    import random

    record: list[Any] = []
    fn = _kernel(monkeypatch, record)
    rng = random.Random(5)
    base = torch.zeros(64, dtype=torch.float32)
    site = Site(fn, (3,), (DYN, 4096, DYN), {"BLOCK": 32, "c_ptr": DYN})
    compared = 0
    for _ in range(200):
        a = base[rng.choice([0, 1, 4, 8])].reshape(1) if rng.random() < 0.2 else base[rng.choice([0, 0, 4, 8]):]
        seed = rng.choice([0, 1, 2, 15, 16, 32, 2**31 - 1, 2**31, 2**40 + 16])
        c = rng.choice([None, base, base[1:]])
        site(a, seed, c)
        got = record[-1]
        launch.launch(fn, (3,), a, 4096, seed, BLOCK=32, c_ptr=c)
        want = record[-1]
        if got[0] == "fast" and want[0] == "fast":
            ptr = lambda v: v.data_ptr() if isinstance(v, torch.Tensor) else v  # noqa: E731
            assert [ptr(v) for v in got[1]] == [ptr(v) for v in want[1]]
            compared += 1
    assert compared > 100


def test_a_site_keeps_no_tensor_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    record: list[Any] = []
    fn = _kernel(monkeypatch, record)
    site = Site(fn, (1,), (DYN, 8, 3), {"BLOCK": 16})
    t = torch.zeros(16)
    ref = weakref.ref(t)
    for _ in range(3):
        site(t)
    assert record[-1][0] == "fast"
    record.clear()  # the fakes' own record of the launches holds the tensor
    del t
    gc.collect()
    assert ref() is None
    assert not any(isinstance(v, torch.Tensor) for hit in site.hits.values() for v in hit[3])


def test_a_fixed_tensor_is_refused_and_a_wrong_count_is_an_error() -> None:
    from rocm_triton_doctor.kernels import add_mul

    with pytest.raises(TypeError, match="must be DYN"):
        Site(add_mul.add_mul_kernel, (1,), (torch.zeros(4), DYN), {})
    site = Site(add_mul.add_mul_kernel, (1,), (DYN, DYN), {})
    with pytest.raises(TypeError, match="2 changing arguments"):
        site(torch.zeros(4))


def test_hooks_take_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    record: list[Any] = []
    fn = _kernel(monkeypatch, record)
    site = Site(fn, (1,), (DYN, 8, 3), {"BLOCK": 16})
    x = torch.zeros(16)
    for _ in range(3):
        site(x)
    assert record[-1][1][9] == x.data_ptr()
    rt = launch._runtime()
    assert rt is not None
    seen: list[Any] = []
    rt.runtime_knobs.launch_enter_hook.add(seen.append)
    try:
        site(x)
        assert record[-1][0] == "slow"
    finally:
        rt.runtime_knobs.launch_enter_hook.remove(seen.append)
    site(x)
    assert record[-1][0] == "fast"


def test_interpreter_kernels_run_through_a_site() -> None:
    """Under TRITON_INTERPRET the kernel is not a JITFunction: the Site hands it to launch() (kernel[grid])."""
    from rocm_triton_doctor.kernels import add_mul

    x, y, z = torch.randn(100), torch.randn(100), torch.randn(100)
    o = torch.empty(100)
    site = Site(add_mul.add_mul_kernel, (1,), (DYN,) * 4 + (100,), {"BLOCK": 128})
    for _ in range(2):
        o.zero_()
        site(x, y, z, o)
        torch.testing.assert_close(o, (x + y) * z)


_GPU_SITES = r"""
import json, torch
from rocm_triton_doctor.kernels import attention, gemm, launch_site
hits = []
real = launch_site.Site.__call__
def spy(self, *dyn):
    n = len(self.hits)
    real(self, *dyn)
    hits.append(bool(self.hits) and len(self.hits) == n)  # a call that neither missed nor learned: the Site's path
launch_site.Site.__call__ = spy
out = {}
g = torch.Generator(device="cuda").manual_seed(0)
for M, K, N, dt, epi, p in ((64, 256, 128, torch.float16, "bias_relu", 0.0), (2, 184, 726, torch.bfloat16, "none", 0.0),
                            (16, 4096, 4096, torch.bfloat16, "none", 0.0), (64, 256, 128, torch.float16, "bias", 0.1),
                            (58, 2262, 1858, torch.float16, "bias_relu", 0.0)):  # both operands copied (CopyPlan)
    worst = 0.0
    for i in range(4):  # new tensors (and a fresh seed) every call: the same signature, the same Sites
        a = torch.randn(M, K, device="cuda", generator=g).to(dt)
        b = torch.randn(K, N, device="cuda", generator=g).to(dt) * K ** -0.5
        bias = torch.randn(N, device="cuda", generator=g).to(dt)
        y = gemm.gemm(a, b, bias if epi != "none" else None, epi, p, seed=None if p else 7)
        ref = gemm.reference(a, b, bias if epi != "none" else None, epi).float()
        if p:  # dropout: the kept entries are ref / (1 - p); each call's own mask
            kept = y != 0
            ref = torch.where(kept, ref / (1 - p), torch.zeros_like(ref))
        worst = max(worst, float((y.float() - ref).abs().max() / (ref.abs().max() + 1e-6)))
    out[f"gemm {M}x{K}x{N} {epi} p={p}"] = worst
for B, H, Hk, S, Sk, D, causal in ((2, 16, 8, 83, 83, 64, False), (1, 32, 8, 1, 4096, 128, False), (1, 4, 4, 128, 128, 64, True)):
    worst = 0.0
    for i in range(4):
        q = torch.randn(B, H, S, D, device="cuda", generator=g, dtype=torch.bfloat16)
        k = torch.randn(B, Hk, Sk, D, device="cuda", generator=g, dtype=torch.bfloat16)
        v = torch.randn(B, Hk, Sk, D, device="cuda", generator=g, dtype=torch.bfloat16)
        y = attention.attention(q, k, v, causal)
        ref = attention.reference(q, k, v, causal)
        worst = max(worst, float((y.float() - ref).abs().max()))
    out[f"attention B{B} H{H}/{Hk} S{S}x{Sk} D{D}"] = worst
a = torch.randn(64, 256, device="cuda", dtype=torch.float16); b = torch.randn(256, 128, device="cuda", dtype=torch.float16)
gemm.gemm(a, b); torch.cuda.synchronize()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    y = gemm.gemm(a, b)
a.copy_(torch.randn_like(a)); graph.replay(); torch.cuda.synchronize()
ref = a.float() @ b.float()
out["graph replay"] = float((y.float() - ref).abs().max() / ref.abs().max())
out["site path calls"] = sum(hits)
print(json.dumps(out))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_sites_on_the_gpu() -> None:  # pragma: no cover - the lent GPU
    """Compiled GEMM (GEMV, split-K, dropout, aligned copies) and attention (pointer, split keys) calls with new tensors each time:
    right every call, most of them through the Site's own path, and under CUDA graph capture."""
    from tests.kernels.helpers import gpu_script_json

    out = gpu_script_json(_GPU_SITES)
    assert out.pop("site path calls") >= 10, out
    assert all(v < 3e-2 for v in out.values()), out  # relative to the largest |ref| (gemm), absolute (attention)
