"""facts/pci.py: PCI display devices from sysfs."""

from __future__ import annotations

from rocm_triton_doctor.check.facts import PciDevice, Status

from ..conftest import facts

DEV = "/sys/bus/pci/devices"


def test_pci_devices_and_amd_ones() -> None:
    files = {f"{DEV}/0000:03:00.0/class": "0x030000\n", f"{DEV}/0000:03:00.0/vendor": "0x1002\n",
             f"{DEV}/0000:03:00.0/device": "0x744c\n", f"{DEV}/0000:19:00.0/class": "0x030200\n",
             f"{DEV}/0000:19:00.0/vendor": "0x10de\n", f"{DEV}/0000:19:00.0/device": "0x2335\n",
             f"{DEV}/0000:20:00.0/class": "0x030000\n", f"{DEV}/0000:20:00.0/vendor": "junk\n"}
    f = facts(files=files)
    assert f.pci_display.value == (PciDevice("0000:03:00.0", 0x1002, 0x744C, 0x030000),
                                   PciDevice("0000:19:00.0", 0x10DE, 0x2335, 0x030200))
    assert [d.address for d in f.pci_amd_gpus] == ["0000:03:00.0"] and f.pci_display.value[1].is_nvidia


def test_pci_empty_when_probed_unknown_otherwise() -> None:
    assert facts(files={}, paths={DEV: {"exists": True}}).pci_display.value == ()
    assert facts(files={}).pci_display.status is Status.UNKNOWN
