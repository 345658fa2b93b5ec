"""Facts: typed, parsed views of a snapshot (DESIGN §2). Pure: a snapshot in, frozen dataclasses out.

One module per topic holds its value types, its text parsers and its builder (`build`): platform, driver, devices,
rocminfo, gpus, rocm, pci, nvidia, runtime, python. This module only bundles them: `Facts`, and `build_facts`,
which calls each topic once, in order. `base.py` says what a fact is (status + value + source); reading one snapshot
entry (file, path, command) is `check/snapshot.py`'s job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rocm_triton_doctor.check import snapshot
from rocm_triton_doctor.check.facts import (
    devices,
    driver,
    errors,
    gpus,
    nvidia,
    pci,
    platform,
    python,
    rocm,
    rocminfo,
    runtime,
    smoke_history,
    workload,
)
from rocm_triton_doctor.check.facts.base import Fact, Status, absent, error, found, safe, unknown
from rocm_triton_doctor.check.facts.devices import DeviceNode, User
from rocm_triton_doctor.check.facts.errors import ErrorText
from rocm_triton_doctor.check.facts.gpus import Gpu
from rocm_triton_doctor.check.facts.nvidia import NvidiaGpu, NvidiaInfo
from rocm_triton_doctor.check.facts.pci import PciDevice
from rocm_triton_doctor.check.facts.platform import OsInfo
from rocm_triton_doctor.check.facts.python import Distribution, PythonEnv
from rocm_triton_doctor.check.facts.rocm import RocmInstall
from rocm_triton_doctor.check.facts.rocminfo import RocminfoReport
from rocm_triton_doctor.check.facts.runtime import Runtime
from rocm_triton_doctor.check.snapshot import CommandRun

__all__ = ["CommandRun", "DeviceNode", "Distribution", "ErrorText", "Fact", "Facts", "Gpu", "NvidiaGpu", "NvidiaInfo", "OsInfo",
           "PciDevice", "PythonEnv", "RocmInstall", "RocminfoReport", "Runtime", "Status", "User", "absent",
           "build_facts", "error", "found", "unknown"]


@dataclass(frozen=True)
class Facts:
    os: Fact[OsInfo]
    kernel_release: Fact[str]
    kernel_config: Fact[dict[str, str]]
    wsl: Fact[bool]
    container: Fact[str]
    amdgpu_initstate: Fact[str]
    amdgpu_version: Fact[str]
    kfd_topology: Fact[int]  # number of KFD nodes (CPU + GPU)
    gpus: Fact[tuple[Gpu, ...]]
    dev_kfd: Fact[DeviceNode]
    render_nodes: Fact[tuple[DeviceNode, ...]]
    dev_dxg: Fact[bool]
    user: Fact[User]
    rocm: Fact[RocmInstall]
    rocminfo: Fact[RocminfoReport]
    agent_enumerator: Fact[tuple[str, ...]]
    nvidia: Fact[NvidiaInfo]
    env: Fact[dict[str, str]]
    python: Fact[PythonEnv]
    runtime: Fact[Runtime]
    which: Fact[dict[str, str | None]]
    pci_display: Fact[tuple[PciDevice, ...]] = field(default_factory=lambda: unknown("/sys/bus/pci"))
    kernel_cmdline: Fact[tuple[str, ...]] = field(default_factory=lambda: unknown("/proc/cmdline"))
    gtt_mib: Fact[int] = field(default_factory=lambda: unknown("dmesg"))
    codeobjects: Fact[Any] = field(default_factory=lambda: unknown("codeobjects"))  # facts/codeobjects.CodeObjects
    workload: Fact[Any] = field(default_factory=lambda: unknown("workload_env"))  # facts/workload.WorkloadEnv
    smoke_results: Fact[Any] = field(default_factory=lambda: unknown("smoke_results"))  # smoke_history.SavedRun tuple
    errors: Fact[tuple[ErrorText, ...]] = field(default_factory=lambda: unknown("errors"))
    commands: tuple[CommandRun, ...] = ()
    probe_errors: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def env_var(self, name: str) -> str | None:
        return self.env.value.get(name) if self.env.found and self.env.value else None

    @property
    def env_complete(self) -> bool:
        """The environment was recorded in full: a variable it does not list is unset. A pasted excerpt (`partial`
        names "env") only says what it shows."""
        partial = self.raw.get("partial")
        return self.env.found and not (isinstance(partial, list) and "env" in partial)

    def env_unset(self, name: str) -> bool | None:
        """True probed unset, False set, None unknown."""
        if self.env_var(name) is not None:
            return False
        return True if self.env_complete else None

    @property
    def amd_gpus_present(self) -> bool | None:
        """True/False when we can tell, None when the snapshot does not say."""
        if self.gpus.found:
            return bool(self.gpus.value)
        if self.gpus.status is Status.ABSENT:
            return False
        return None

    @property
    def pci_amd_gpus(self) -> tuple[PciDevice, ...]:
        return tuple(d for d in (self.pci_display.value or ()) if d.is_amd) if self.pci_display.found else ()

    @property
    def nvidia_gpus_present(self) -> bool:
        return bool(self.nvidia.found and self.nvidia.value and self.nvidia.value.gpus)


def build_facts(snap: Mapping[str, Any]) -> Facts:
    """Each topic once, in dependency order: the environment (overrides, ROCM_PATH) and rocminfo feed the GPU list."""
    from rocm_triton_doctor.check.facts.codeobjects import codeobjects_fact  # imports this module: here, not on top

    plat = platform.build(snap)
    agents = rocminfo.build(snap)
    return Facts(
        **plat,
        **driver.build(snap),
        **gpus.build(snap, plat["env"], agents["rocminfo"]),
        **devices.build(snap),
        **rocm.build(snap, plat["env"]),
        **agents,
        **nvidia.build(snap),
        **python.build(snap),
        **runtime.build(snap),
        **pci.build(snap),
        codeobjects=safe("codeobjects", lambda: codeobjects_fact(snap)),
        workload=safe("workload_env", lambda: workload.workload_fact(snap)),
        smoke_results=safe("smoke_results", lambda: smoke_history.smoke_results_fact(snap)),
        **errors.build(snap),
        commands=snapshot.commands(snap),
        raw=snap,
    )
