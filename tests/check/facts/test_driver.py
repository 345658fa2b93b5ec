"""facts/driver.py: amdgpu module state and the KFD topology node count."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import Status

from ..conftest import KFD, facts, gpu


def test_initstate_is_stripped_and_version_kept() -> None:
    f = facts(files={"/sys/module/amdgpu/initstate": "live\n", "/sys/module/amdgpu/version": "6.10.5\n"})
    assert f.amdgpu_initstate.value == "live"
    assert f.amdgpu_version.value == "6.10.5\n"


def test_kfd_topology_counts_cpu_and_gpu_nodes() -> None:
    f = facts(files={f"{KFD}/0/properties": "cpu_cores_count 64\nsimd_count 0\n", **gpu(1, 90402)})
    assert f.kfd_topology.value == 2


def test_kfd_topology_absent_or_unknown() -> None:
    assert facts(files={}, paths={"/sys/class/kfd": None}).kfd_topology.status is Status.ABSENT
    assert facts(files={"/sys/class/kfd/kfd/topology/system_properties": None}).kfd_topology.status is Status.ABSENT
    assert facts(files={}).kfd_topology.status is Status.UNKNOWN
    assert facts().kfd_topology.status is Status.UNKNOWN


def test_gtt_size_from_amdgpus_boot_line() -> None:
    # amdgpu_ttm.c: `amdgpu 0000:bd:00.0:  63968M of GTT memory ready.` (ds4#475); the largest where several GPUs log
    log = ("[    1.7] amdgpu 0000:bd:00.0:  512M of VRAM memory ready\n"
           "[    1.768086] amdgpu 0000:bd:00.0:  63968M of GTT memory ready.\n")
    assert facts(commands={"dmesg": log}).gtt_mib.value == 63968
    assert not facts(commands={"dmesg": "[    1.7] amdgpu: VRAM 512M\n"}).gtt_mib.found
    assert not facts().gtt_mib.found
