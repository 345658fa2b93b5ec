"""checks/rocm.py: one test per severity each check can give."""

from __future__ import annotations

from ..conftest import AMD_LIVE, one, rocm_python


def test_rocm_install_info_without_system_rocm_on_amd() -> None:
    f = one("rocm-install", files={**AMD_LIVE, "/opt/rocm/.info/version": None})
    assert (f.severity.value, f.title) == ("info", "no system ROCm installed")


def test_rocm_install_ok() -> None:
    f = one("rocm-install", files={"/opt/rocm/.info/version": "6.4.0-15396\n"})
    assert (f.severity.value, f.title) == ("ok", "ROCm 6.4.0 at /opt/rocm")


def test_rocm_install_skip_when_unknown() -> None:
    assert one("rocm-install").title == "system ROCm unknown"


def test_rocm_torch_hip_mismatch_skip_without_rocm_torch() -> None:
    assert one("rocm-torch-hip-mismatch", python=rocm_python("2.9.1+cu128")).title == "no ROCm build of torch"


def test_rocm_torch_hip_mismatch_ok_when_aligned() -> None:
    f = one("rocm-torch-hip-mismatch", files={"/opt/rocm/.info/version": "6.4.0\n"}, python=rocm_python("2.9.1+rocm6.4"))
    assert (f.severity.value, f.title) == ("ok", "system ROCm 6.4.0 matches torch's bundled ROCm 6.4")


def test_rocm_torch_hip_mismatch_warn() -> None:
    f = one("rocm-torch-hip-mismatch", files={"/opt/rocm/.info/version": "6.2.0\n"}, python=rocm_python("2.9.1+rocm6.4"))
    assert (f.severity.value, f.title) == ("warn", "system ROCm 6.2.0 differs from torch's bundled ROCm 6.4")


def test_ld_library_path_rocm_skip_without_env() -> None:
    assert one("ld-library-path-rocm").title == "environment not recorded"


def test_ld_library_path_rocm_ok() -> None:
    assert one("ld-library-path-rocm", env={"LD_LIBRARY_PATH": "/usr/local/lib"}).severity.value == "ok"


def test_ld_library_path_rocm_info_without_rocm_torch() -> None:
    assert one("ld-library-path-rocm", env={"LD_LIBRARY_PATH": "/opt/rocm/lib"}).severity.value == "info"


def test_ld_library_path_pulls_system_rocm() -> None:
    f = one("ld-library-path-rocm", env={"LD_LIBRARY_PATH": "/opt/rocm-6.1.0/lib:/usr/local/lib"},
            python=rocm_python("2.8.0+rocm6.4"))
    assert f.severity.value == "warn"


APT = ("The following packages have unmet dependencies:\n rocm-hip-runtime : Depends: rocminfo (= 1.0.0.60200-66~24.04) "
       "but 5.7.1-3build1 is to be installed")


def test_rocm_apt_distro_package_skip_without_a_rocm_conflict() -> None:
    assert one("rocm-apt-distro-package").severity.value == "skip"
    other = "libfoo-dev : Depends: libfoo1 (= 2.0-1) but 2.1-1 is to be installed"
    assert one("rocm-apt-distro-package", errors=[{"text": other, "from": "text"}]).severity.value == "skip"


def test_rocm_apt_distro_package_fail_pins_amds_repository() -> None:
    # legacy-rocm-build#3656: Ubuntu universe's rocminfo outranks AMD's.
    f = one("rocm-apt-distro-package", errors=[{"text": APT, "from": "text"}])
    assert f.severity.value == "fail" and "rocminfo" in f.title and f.fix is not None
    assert f.fix.commands[-1] == "sudo apt-get install --allow-downgrades rocminfo=1.0.0.60200-66~24.04 rocm-hip-runtime"
    assert "repo.radeon.com" in f.fix.commands[0]


def test_rocm_apt_distro_package_reads_apts_continuation_lines() -> None:
    # legacy-rocm-build#6367: the ROCm conflicts sit on the lines apt indents under the package, whose first line is
    # another kind ("but it is not going to be installed").
    text = (" rocm-hip-runtime-dev : Depends: rocm-hip-runtime (= 7.2.4.70204-93~24.04) but it is not going to be installed\n"
            "                        Depends: rocm-cmake (= 0.14.0.70204-93~24.04) but 6.0.0-1 is to be installed\n"
            "                        Depends: hipcc (= 1.1.1.70204-93~24.04) but 5.7.1-3 is to be installed\n"
            " libfoo-dev : Depends: libfoo1 (= 2.0-1) but 2.1-1 is to be installed\n")
    f = one("rocm-apt-distro-package", errors=[{"text": text, "from": "text"}])
    assert f.severity.value == "fail"
    assert f.title == "apt picks rocm-cmake 6.0.0-1 where rocm-hip-runtime-dev needs 0.14.0.70204-93~24.04"
    assert f.fix is not None and f.fix.commands[-1] == ("sudo apt-get install --allow-downgrades rocm-cmake=0.14.0.70204-93~24.04 "
                                                        "hipcc=1.1.1.70204-93~24.04 rocm-hip-runtime-dev")


def test_rocm_apt_distro_package_reads_apts_resolver_debug_lines() -> None:
    # rocm-install-on-linux#583 (KDE neon 24.04): apt's resolver shows the installed (@ii) distro rocminfo where rocm
    # needs AMD's exact version; an uninstalled dependency (`< none | …`) is not a conflict.
    text = ("Broken rocm:amd64 Depends on rocminfo:amd64 < 5.7.1-3build1 @ii mK > (= 1.0.0.70001-42~24.04)\n"
            "Broken rocm:amd64 Depends on rocm-cmake:amd64 < none | 0.14.0.70001-42~24.04 @un uH > (= 0.14.0.70001-42~24.04)")
    f = one("rocm-apt-distro-package", errors=[{"text": text, "from": "text"}])
    assert f.severity.value == "fail" and f.title == "apt picks rocminfo 5.7.1-3build1 where rocm needs 1.0.0.70001-42~24.04"
    assert f.fix is not None and f.fix.commands[-1] == "sudo apt-get install --allow-downgrades rocminfo=1.0.0.70001-42~24.04 rocm"


def test_hip_headers_of_the_distribution_beside_amds_rocm_fail() -> None:
    # llama.cpp#15196: `find / -name hip_bf16.h` -> /usr/include/hip/… (libamdhip64-dev) and /opt/rocm-6.4.3/include/hip/…
    f = one("hip-headers-mixed", system={"hip_include_roots": ["/usr", "/opt/rocm-6.4.3"]})
    assert f.severity.value == "fail" and f.fix is not None and "libamdhip64-dev" in f.fix.text and not f.fix.commands
    assert one("hip-headers-mixed", system={"hip_include_roots": ["/opt/rocm-6.4.3"]}).severity.value == "ok"
    assert one("hip-headers-mixed").severity.value == "skip"
