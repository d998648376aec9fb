#!/usr/bin/env bash
# Remove the boardcam service installed by systemd/install.sh.
#
#   sudo systemd/uninstall.sh            stop and remove the service and /opt/boardcam;
#                                        keep calibration and game logs (/var/lib/boardcam),
#                                        the config (/etc/boardcam) and the user
#   sudo systemd/uninstall.sh --purge    also delete those three
#   systemd/uninstall.sh --dry-run       print every action, change nothing
#
# apt packages (picamera2, lgpio, ...) are left installed: other programs use them.
# Paths follow the same BOARDCAM_* variables as install.sh.
set -euo pipefail

# shellcheck source=systemd/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
UNIT="$UNIT_DIR/boardcam.service"
PURGE=0

while [ $# -gt 0 ]; do
    case "$1" in
        --purge) PURGE=1 ;;
        *) common_option "$1" ;;
    esac
    shift
done

if [ "$DRY_RUN" -eq 1 ]; then
    say "dry run: nothing will be changed"
elif [ "$(id -u)" -ne 0 ]; then
    fail "run as root: sudo $0"
fi

say "service"
if [ -e "$UNIT" ]; then
    # `|| true`: a unit that was never started or is already stopped is fine.
    run systemctl disable --now boardcam.service || true
    run rm -f "$UNIT"
    run systemctl daemon-reload
    run systemctl reset-failed boardcam.service || true
else
    note "no $UNIT"
fi

say "program files $PREFIX"
if [ -e "$PREFIX" ]; then
    run rm -rf "$PREFIX"
else
    note "already gone"
fi

if [ "$PURGE" -eq 1 ]; then
    say "purge: calibration, game logs, config and the service user"
    for directory in "$STATE_DIR" "$ETC_DIR"; do
        if [ -e "$directory" ]; then
            run rm -rf "$directory"
        else
            note "no $directory"
        fi
    done
    if id -u "$SERVICE_USER" >/dev/null 2>&1; then
        run userdel "$SERVICE_USER"
    else
        note "no user $SERVICE_USER"
    fi
else
    say "kept"
    note "$STATE_DIR (calibration and game logs), $ETC_DIR (config), user $SERVICE_USER"
    note "remove them too with: sudo $0 --purge"
fi
say "done"
