#!/usr/bin/env bash
# Install boardcam as a service on Raspberry Pi OS (64-bit, Bookworm or Trixie).
#
#   sudo systemd/install.sh              install or update (safe to run again)
#   systemd/install.sh --dry-run         print every action, change nothing
#
# What it does, in order:
#   1. apt packages: picamera2/libcamera from Raspberry Pi OS (they cannot come
#      from PyPI), the GPIO/SPI bindings, i2c-tools, venv support
#   2. the system user "boardcam" in the groups video, gpio, i2c and spi
#   3. a virtual environment in /opt/boardcam/venv made with
#      --system-site-packages, so it sees the apt picamera2 and NumPy
#   4. pip install ".[pi]" with this release's constraints file (the NumPy trap,
#      see constraints-bookworm.txt), then a check that picamera2, NumPy and
#      OpenCV import together
#   5. /etc/boardcam/config.toml from the shipped defaults, only if absent
#   6. the systemd unit, enabled and (re)started
#
# Options:
#   --dry-run          print the actions without doing them (no root needed)
#   --release NAME     bookworm | trixie (default: read from /etc/os-release)
#   --enable-i2c-spi   also switch on the I2C and SPI interfaces (raspi-config)
#   --no-start         install and enable, but do not (re)start the service now
#   --force            install on a machine that is not arm64 Raspberry Pi OS
#
# Paths can be moved for testing with BOARDCAM_PREFIX (default /opt/boardcam),
# BOARDCAM_ETC (/etc/boardcam), BOARDCAM_STATE (/var/lib/boardcam) and
# BOARDCAM_UNIT_DIR (/etc/systemd/system).
set -euo pipefail
# Everything installed must be readable by the service user, whatever root's umask.
umask 022

SOURCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=systemd/common.sh
. "$SOURCE_DIR/systemd/common.sh"
OS_RELEASE_FILE="${BOARDCAM_OS_RELEASE:-/etc/os-release}"
VENV="$PREFIX/venv"
HARDWARE_GROUPS=(video gpio i2c spi)

# picamera2 + libcamera bindings come only from Raspberry Pi OS; lgpio,
# spidev and SciPy from apt so pip never has to build or fetch them against
# another NumPy (the venv sees them).
REQUIRED_PACKAGES=(
    python3-venv
    python3-picamera2 python3-libcamera python3-numpy python3-scipy
    python3-lgpio python3-spidev
    i2c-tools
)
# Nice to have; a missing one is reported, not fatal.
#   rpicam-apps-lite: `rpicam-hello --list-cameras` for diagnosing the camera
#   fonts-dejavu-core: a TrueType font for the display's text
#   libopenjp2-7: Pillow's JPEG 2000 support (luma's documented prerequisite)
OPTIONAL_PACKAGES=(rpicam-apps-lite fonts-dejavu-core libopenjp2-7)

ORIGINAL_ARGS=("$@")
RELEASE=""
ENABLE_BUSES=0
START=1
FORCE=0

while [ $# -gt 0 ]; do
    case "$1" in
        --release) RELEASE="${2:?--release needs bookworm or trixie}"; shift ;;
        --release=*) RELEASE="${1#*=}" ;;
        --enable-i2c-spi) ENABLE_BUSES=1 ;;
        --no-start) START=0 ;;
        --force) FORCE=1 ;;
        *) common_option "$1" ;;
    esac
    shift
done

# ---------------------------------------------------------------- checks
detect_release() {
    if [ -n "$RELEASE" ]; then
        return
    fi
    if [ -r "$OS_RELEASE_FILE" ]; then
        RELEASE="$(. "$OS_RELEASE_FILE" && printf '%s' "${VERSION_CODENAME:-}")"
    fi
    [ -n "$RELEASE" ] || fail "cannot tell the OS release from $OS_RELEASE_FILE; pass --release bookworm|trixie"
}

CONSTRAINTS=""
check_platform() {
    detect_release
    case "$RELEASE" in
        bookworm|trixie) CONSTRAINTS="$SOURCE_DIR/systemd/constraints-$RELEASE.txt" ;;
        *) fail "release '$RELEASE' is not supported: Raspberry Pi OS Bookworm or Trixie (64-bit) only" ;;
    esac
    [ -f "$CONSTRAINTS" ] || fail "missing $CONSTRAINTS"
    say "Raspberry Pi OS $RELEASE, constraints $(basename "$CONSTRAINTS")"

    local arch model
    arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"
    model="$( { tr -d '\0' </proc/device-tree/model; } 2>/dev/null || true)"
    if [ "$arch" != arm64 ] && [ "$arch" != aarch64 ]; then
        if [ "$DRY_RUN" -eq 1 ] || [ "$FORCE" -eq 1 ]; then
            note "warning: architecture is $arch, not arm64 (64-bit Raspberry Pi OS)"
        else
            fail "this is $arch, not 64-bit Raspberry Pi OS (arm64); use --force to try anyway"
        fi
    fi
    case "$model" in
        "Raspberry Pi"*) note "$model" ;;
        *) note "warning: not a Raspberry Pi (no camera or GPIO to find here)" ;;
    esac
    if [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
        fail "run as root: sudo $0 ${ORIGINAL_ARGS[*]}"
    fi
}

# ---------------------------------------------------------------- steps
install_packages() {
    say "apt packages"
    run env DEBIAN_FRONTEND=noninteractive apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${REQUIRED_PACKAGES[@]}"
    local package
    for package in "${OPTIONAL_PACKAGES[@]}"; do
        if ! run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package"; then
            note "warning: optional package $package could not be installed; continuing"
        fi
    done
}

enable_buses() {
    if [ "$ENABLE_BUSES" -eq 0 ]; then
        note "I2C/SPI left as they are (--enable-i2c-spi switches them on)"
        return
    fi
    say "I2C and SPI interfaces"
    if command -v raspi-config >/dev/null 2>&1 || [ "$DRY_RUN" -eq 1 ]; then
        run raspi-config nonint do_i2c 0
        run raspi-config nonint do_spi 0
        note "a reboot may be needed before /dev/i2c-1 and /dev/spidev0.0 appear"
    else
        note "warning: raspi-config not found; enable dtparam=i2c_arm=on and dtparam=spi=on in config.txt"
    fi
}

create_user() {
    say "service user $SERVICE_USER"
    local group
    for group in "${HARDWARE_GROUPS[@]}"; do
        if getent group "$group" >/dev/null; then
            note "group $group exists"
        else
            run groupadd --system "$group"
        fi
    done
    if id -u "$SERVICE_USER" >/dev/null 2>&1; then
        note "user $SERVICE_USER exists"
    else
        run useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
            --shell /usr/sbin/nologin --comment "boardcam referee" "$SERVICE_USER"
    fi
    run usermod --append --groups "$(IFS=,; echo "${HARDWARE_GROUPS[*]}")" "$SERVICE_USER"
    run install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0750 "$STATE_DIR"
}

venv_is_usable() {
    # It must see the apt packages, and still match the system Python (an OS
    # upgrade from Bookworm's 3.11 to Trixie's 3.13 leaves a dead venv behind).
    grep -qiE '^include-system-site-packages *= *true' "$VENV/pyvenv.cfg" 2>/dev/null || return 1
    local ours theirs
    ours="$("$VENV/bin/python" -c 'import sys; print(sys.version_info[:2])' 2>/dev/null)" || return 1
    theirs="$(python3 -c 'import sys; print(sys.version_info[:2])')" || return 1
    [ "$ours" = "$theirs" ]
}

create_venv() {
    say "virtual environment $VENV"
    if venv_is_usable; then
        note "exists, sees the system packages, matches python3"
    else
        if [ -d "$VENV" ]; then
            note "exists but lacks --system-site-packages or is for another Python: recreating"
            run rm -rf "$VENV"
        fi
        run install -d -m 0755 "$PREFIX"
        run python3 -m venv --system-site-packages "$VENV"
    fi
}

install_boardcam() {
    say "boardcam into the venv"
    # only-if-needed: keep the apt NumPy/picamera2 the venv inherits unless a
    # requirement truly demands another version (the constraints forbid the bad ones).
    run "$VENV/bin/python" -m pip install --upgrade --upgrade-strategy only-if-needed \
        --constraint "$CONSTRAINTS" "$SOURCE_DIR[pi]"
    say "checking that picamera2, NumPy, SciPy, OpenCV and the GPIO/SPI bindings load together"
    run "$VENV/bin/python" -c 'import numpy, scipy, cv2, picamera2, lgpio, spidev, gpiozero, luma.core; print("numpy", numpy.__version__, "from", numpy.__file__); print("opencv", cv2.__version__)'
}

install_config() {
    say "configuration $ETC_DIR/config.toml"
    local target="$ETC_DIR/config.toml"
    if [ -e "$target" ]; then
        note "keeping existing $target"
    else
        run install -D -m 0644 "$SOURCE_DIR/firmware/boardcam/firmware/default-config.toml" "$target"
    fi
}

install_unit() {
    say "systemd unit"
    run install -D -m 0644 "$SOURCE_DIR/systemd/boardcam.service" "$UNIT_DIR/boardcam.service"
    run systemctl daemon-reload
    run systemctl enable boardcam.service
    if [ "$START" -eq 1 ]; then
        run systemctl restart boardcam.service
    else
        note "not started (--no-start): sudo systemctl start boardcam"
    fi
}

main() {
    if [ "$DRY_RUN" -eq 1 ]; then
        say "dry run: nothing will be changed"
    fi
    check_platform
    install_packages
    enable_buses
    create_user
    create_venv
    install_boardcam
    install_config
    install_unit
    say "done. Check it with: $VENV/bin/boardcam doctor   and   journalctl -u boardcam -f"
}

main
