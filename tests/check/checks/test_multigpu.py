"""checks/multigpu.py: rccl-gfx12-protocol on the releases, GPUs and launches that decide it."""

from __future__ import annotations

from rocm_triton_doctor.check.findings import Severity

from ..conftest import one

TWO_R9700 = [{"tool": "rocminfo", "gfx": "gfx1201", "index": 0}, {"tool": "rocminfo", "gfx": "gfx1201", "index": 1}]


def test_rccl_gfx12_protocol_skips_without_rdna4_a_known_release_or_two_gpus() -> None:
    assert one("rccl-gfx12-protocol").severity is Severity.SKIP
    mi300 = [{"tool": "rocminfo", "gfx": "gfx942", "index": i} for i in range(2)]
    assert one("rccl-gfx12-protocol", gpus_seen=mi300, system={"stated_rocm": "7.2.1"}).severity is Severity.SKIP
    # ROCm 7.1.1's RCCL did not have it; nor does an RCCL release other than 2.27 (TheRock's 2.28.3+ has the fix)
    assert one("rccl-gfx12-protocol", gpus_seen=TWO_R9700, system={"stated_rocm": "7.1.1"}).severity is Severity.SKIP
    newer = {"stated_rocm": "7.2.1", "rccl_version": "2.30.4"}
    assert one("rccl-gfx12-protocol", gpus_seen=TWO_R9700, system=newer).severity is Severity.SKIP
    one_gpu = [TWO_R9700[0]]
    assert one("rccl-gfx12-protocol", gpus_seen=one_gpu, system={"stated_rocm": "7.2.1"}).severity is Severity.SKIP


def test_rccl_gfx12_protocol_warns_on_the_release_and_fails_on_the_reported_hang() -> None:
    f = one("rccl-gfx12-protocol", gpus_seen=TWO_R9700, system={"stated_rocm": "7.2.1"})
    assert f.severity is Severity.WARN and f.fix is not None and f.fix.commands == ("export NCCL_PROTO=Simple",)
    # vllm#40980: one GPU line, a launch across two, RCCL 2.27.7, the reporter's deadlock
    seen = [TWO_R9700[0]]
    hang = {"rccl_version": "2.27.7", "gpus_per_launch": 2, "hang_reported": True}
    f = one("rccl-gfx12-protocol", gpus_seen=seen, system=hang)
    assert f.severity is Severity.FAIL and "NCCL_PROTO=Simple" in f.fix.text  # type: ignore[union-attr]
    # a pip torch bundles its release's RCCL; two GPUs through a visibility variable
    torch72 = {"torch_version": "2.9.1+rocm7.2.0", "is_available": True}
    f = one("rccl-gfx12-protocol", gpus_seen=seen, runtime=torch72, env={"HIP_VISIBLE_DEVICES": "0,1"})
    assert f.severity is Severity.WARN


def test_rccl_gfx12_protocol_ok_when_the_simple_protocol_is_set() -> None:
    f = one("rccl-gfx12-protocol", gpus_seen=TWO_R9700, system={"stated_rocm": "7.2.0"}, env={"NCCL_PROTO": "Simple"})
    assert f.severity is Severity.OK
