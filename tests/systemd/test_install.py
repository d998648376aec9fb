"""install.sh / uninstall.sh in --dry-run: what they would do, and that they do nothing."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "systemd" / "install.sh"
UNINSTALL = ROOT / "systemd" / "uninstall.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def paths(tmp_path: Path) -> dict[str, str]:
    """Every path the scripts touch, moved under tmp_path."""
    return {
        "BOARDCAM_PREFIX": str(tmp_path / "opt" / "boardcam"),
        "BOARDCAM_ETC": str(tmp_path / "etc" / "boardcam"),
        "BOARDCAM_STATE": str(tmp_path / "var" / "lib" / "boardcam"),
        "BOARDCAM_UNIT_DIR": str(tmp_path / "etc" / "systemd" / "system"),
    }


def run(script: Path, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **paths(tmp_path), **env}
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True,
                          env=environment, timeout=60, cwd=tmp_path)


def actions(output: str) -> list[str]:
    return [line[2:] for line in output.splitlines() if line.startswith("+ ")]


def files_under(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


@pytest.fixture
def bookworm(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run(INSTALL, tmp_path, "--dry-run", "--release", "bookworm")


def test_dry_run_succeeds_on_a_laptop_and_says_so(bookworm) -> None:
    assert bookworm.returncode == 0, bookworm.stderr
    assert "dry run: nothing will be changed" in bookworm.stdout


def test_apt_packages_for_the_camera_and_the_venv(bookworm) -> None:
    apt = [a for a in actions(bookworm.stdout) if "apt-get install" in a]
    required = apt[0].split()
    for package in ("python3-picamera2", "python3-libcamera", "python3-venv",
                    "python3-lgpio", "python3-spidev", "i2c-tools"):
        assert package in required
    assert any(a.endswith(" update") for a in actions(bookworm.stdout))


def test_the_venv_sees_system_packages(bookworm, tmp_path: Path) -> None:
    venv = paths(tmp_path)["BOARDCAM_PREFIX"] + "/venv"
    assert f"python3 -m venv --system-site-packages {venv}" in actions(bookworm.stdout)


def test_pip_installs_the_pi_extra_with_the_release_constraints(bookworm, tmp_path: Path) -> None:
    pip = [a for a in actions(bookworm.stdout) if " -m pip install " in a]
    assert len(pip) == 1
    assert f"--constraint {ROOT}/systemd/constraints-bookworm.txt" in pip[0]
    assert pip[0].endswith(f"'{ROOT}[pi]'")
    assert pip[0].startswith(paths(tmp_path)["BOARDCAM_PREFIX"] + "/venv/bin/python")


def test_the_numpy_trap_is_checked_after_installing(bookworm) -> None:
    check = [a for a in actions(bookworm.stdout) if "import numpy, scipy, cv2, picamera2" in a]
    assert check, "installer must prove picamera2, SciPy and OpenCV load with the venv's NumPy"


def test_the_service_user_and_its_groups(bookworm) -> None:
    out = bookworm.stdout
    assert ("useradd --system" in out and " boardcam\n" in out) or "user boardcam exists" in out
    assert "usermod --append --groups video,gpio,i2c,spi boardcam" in actions(out)
    for group in ("video", "gpio", "i2c", "spi"):
        assert f"groupadd --system {group}" in out or f"group {group} exists" in out


def test_unit_config_and_service_are_installed(bookworm, tmp_path: Path) -> None:
    p = paths(tmp_path)
    done = actions(bookworm.stdout)
    assert (f"install -D -m 0644 {ROOT}/systemd/boardcam.service "
            f"{p['BOARDCAM_UNIT_DIR']}/boardcam.service") in done
    assert (f"install -D -m 0644 {ROOT}/firmware/boardcam/firmware/default-config.toml "
            f"{p['BOARDCAM_ETC']}/config.toml") in done
    assert done.index("systemctl daemon-reload") < done.index("systemctl enable boardcam.service")
    assert done[-1] == "systemctl restart boardcam.service"


def test_dry_run_changes_nothing(bookworm, tmp_path: Path) -> None:
    assert files_under(tmp_path) == []


def test_trixie_uses_its_own_constraints(tmp_path: Path) -> None:
    result = run(INSTALL, tmp_path, "--dry-run", "--release", "trixie")
    assert result.returncode == 0
    assert "constraints-trixie.txt" in result.stdout
    assert "constraints-bookworm.txt" not in result.stdout


def test_release_is_read_from_os_release(tmp_path: Path) -> None:
    os_release = tmp_path / "os-release"
    os_release.write_text('PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nVERSION_CODENAME=trixie\n')
    result = run(INSTALL, tmp_path, "--dry-run", BOARDCAM_OS_RELEASE=str(os_release))
    assert "Raspberry Pi OS trixie" in result.stdout


@pytest.mark.parametrize("release", ["bullseye", "buster"])
def test_unsupported_releases_are_refused(tmp_path: Path, release: str) -> None:
    result = run(INSTALL, tmp_path, "--dry-run", "--release", release)
    assert result.returncode != 0
    assert f"release '{release}' is not supported" in result.stderr


def test_an_existing_config_is_kept(tmp_path: Path) -> None:
    config = Path(paths(tmp_path)["BOARDCAM_ETC"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[display]\nkind = \"ssd1306\"\n")
    result = run(INSTALL, tmp_path, "--dry-run", "--release", "bookworm")
    assert f"keeping existing {config}" in result.stdout
    assert not any(a.endswith("config.toml") for a in actions(result.stdout))


def make_venv(tmp_path: Path, system_site_packages: bool) -> Path:
    venv = Path(paths(tmp_path)["BOARDCAM_PREFIX"]) / "venv"
    (venv / "bin").mkdir(parents=True)
    python3 = shutil.which("python3")
    assert python3
    (venv / "bin" / "python").symlink_to(python3)
    flag = "true" if system_site_packages else "false"
    (venv / "pyvenv.cfg").write_text(f"include-system-site-packages = {flag}\n")
    return venv


def test_a_good_venv_is_reused(tmp_path: Path) -> None:
    make_venv(tmp_path, system_site_packages=True)
    result = run(INSTALL, tmp_path, "--dry-run", "--release", "bookworm")
    assert "sees the system packages" in result.stdout
    assert not any("-m venv" in a for a in actions(result.stdout))


def test_a_venv_without_system_packages_is_recreated(tmp_path: Path) -> None:
    venv = make_venv(tmp_path, system_site_packages=False)
    result = run(INSTALL, tmp_path, "--dry-run", "--release", "bookworm")
    done = actions(result.stdout)
    assert f"rm -rf {venv}" in done
    assert done.index(f"rm -rf {venv}") < done.index(f"python3 -m venv --system-site-packages {venv}")
    assert (venv / "pyvenv.cfg").exists()  # still a dry run


@pytest.mark.skipif(platform.machine() in ("aarch64", "arm64"),
                    reason="on an arm64 machine as root this would really install")
def test_a_real_install_off_a_pi_is_refused_before_any_change(tmp_path: Path) -> None:
    result = run(INSTALL, tmp_path, "--release", "bookworm")
    assert result.returncode != 0
    assert "not 64-bit Raspberry Pi OS" in result.stderr
    assert actions(result.stdout) == []
    assert files_under(tmp_path) == []


def test_unknown_options_are_refused(tmp_path: Path) -> None:
    for script in (INSTALL, UNINSTALL):
        result = run(script, tmp_path, "--dryrun")
        assert result.returncode == 2 and f"{script.name}: unknown option --dryrun" in result.stderr


def test_each_script_shows_its_own_help() -> None:
    for script, option in ((INSTALL, "--enable-i2c-spi"), (UNINSTALL, "--purge")):
        result = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True)
        assert result.returncode == 0 and option in result.stdout and "shellcheck" not in result.stdout


def test_dangerous_paths_are_refused(tmp_path: Path) -> None:
    for script in (INSTALL, UNINSTALL):
        result = run(script, tmp_path, "--dry-run", BOARDCAM_PREFIX="/")
        assert result.returncode == 2 and "refusing path '/'" in result.stderr


# ------------------------------------------------------------------ uninstall
def installed(tmp_path: Path) -> dict[str, Path]:
    p = {k: Path(v) for k, v in paths(tmp_path).items()}
    for directory in p.values():
        directory.mkdir(parents=True, exist_ok=True)
    (p["BOARDCAM_UNIT_DIR"] / "boardcam.service").write_text("[Service]\n")
    (p["BOARDCAM_STATE"] / "calibration.json").write_text("{}")
    return p


def test_uninstall_keeps_calibration_and_logs(tmp_path: Path) -> None:
    p = installed(tmp_path)
    result = run(UNINSTALL, tmp_path, "--dry-run")
    done = actions(result.stdout)
    assert result.returncode == 0
    assert "systemctl disable --now boardcam.service" in done
    assert f"rm -f {p['BOARDCAM_UNIT_DIR']}/boardcam.service" in done
    assert f"rm -rf {p['BOARDCAM_PREFIX']}" in done
    assert not any(str(p["BOARDCAM_STATE"]) in a or str(p["BOARDCAM_ETC"]) in a for a in done)
    assert (p["BOARDCAM_STATE"] / "calibration.json").exists()


def test_uninstall_purge_removes_state_and_config(tmp_path: Path) -> None:
    p = installed(tmp_path)
    result = run(UNINSTALL, tmp_path, "--dry-run", "--purge")
    done = actions(result.stdout)
    assert f"rm -rf {p['BOARDCAM_STATE']}" in done
    assert f"rm -rf {p['BOARDCAM_ETC']}" in done
    assert (p["BOARDCAM_STATE"] / "calibration.json").exists()  # dry run


@pytest.mark.parametrize("script", [INSTALL, UNINSTALL, ROOT / "systemd" / "common.sh"])
def test_scripts_parse(script: Path) -> None:
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0


# ------------------------------------------------------------------ constraints
def constraints(release: str) -> dict[str, SpecifierSet]:
    text = (ROOT / "systemd" / f"constraints-{release}.txt").read_text()
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            requirement = Requirement(line)
            pins[requirement.name] = requirement.specifier
    return pins


def project_requirement(name: str) -> SpecifierSet:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for line in project["dependencies"]:
        requirement = Requirement(line)
        if requirement.name == name:
            return requirement.specifier
    raise AssertionError(f"{name} not in pyproject dependencies")


def test_bookworm_keeps_numpy_1_like_its_apt_picamera2() -> None:
    pins = constraints("bookworm")
    assert "1.24.2" in pins["numpy"]  # Debian 12's python3-numpy
    assert "2.0.0" not in pins["numpy"]
    assert "4.12.0.88" not in pins["opencv-python-headless"]  # first to require numpy>=2
    assert "4.11.0.86" in pins["opencv-python-headless"]


def test_trixie_keeps_numpy_2_like_its_apt_picamera2() -> None:
    pins = constraints("trixie")
    assert "2.2.4" in pins["numpy"]  # Debian 13's python3-numpy
    assert "1.26.4" not in pins["numpy"]
    assert "4.11.0.86" not in pins["opencv-python-headless"]  # built against NumPy 1
    assert "4.12.0.88" in pins["opencv-python-headless"]


@pytest.mark.parametrize("release, apt_scipy", [("bookworm", "1.10.1"), ("trixie", "1.15.3")])
def test_constraints_accept_the_apt_scipy(release, apt_scipy) -> None:
    assert apt_scipy in constraints(release)["scipy"]
    assert apt_scipy in project_requirement("scipy")


@pytest.mark.parametrize(
    "release, numpy, opencv",
    [("bookworm", "1.24.2", "4.11.0.86"), ("trixie", "2.2.4", "4.12.0.88")],
)
def test_constraints_leave_a_version_the_project_accepts(release, numpy, opencv) -> None:
    pins = constraints(release)
    assert numpy in pins["numpy"] and numpy in project_requirement("numpy")
    assert opencv in pins["opencv-python-headless"]
    assert opencv in project_requirement("opencv-python-headless")


def test_installer_help_lists_its_options() -> None:
    result = subprocess.run(["bash", str(INSTALL), "--help"], capture_output=True, text=True)
    for option in ("--dry-run", "--release", "--enable-i2c-spi", "--no-start", "--force"):
        assert re.search(rf"^\s*{re.escape(option)}\b", result.stdout, re.M), option
