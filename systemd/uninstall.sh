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

PREFIX="${BOARDCAM_PREFIX:-/opt/boardcam}"
ETC_DIR="${BOARDCAM_ETC:-/etc/boardcam}"
STATE_DIR="${BOARDCAM_STATE:-/var/lib/boardcam}"
UNIT_DIR="${BOARDCAM_UNIT_DIR:-/etc/systemd/system}"
UNIT="$UNIT_DIR/boardcam.service"
SERVICE_USER=boardcam

# rm -rf and install -D act on these: refuse anything but a real absolute path.
for path in "$PREFIX" "$ETC_DIR" "$STATE_DIR" "$UNIT_DIR"; do
    case "$path" in
        /*[!/]*) ;;
        *) echo "$(basename "$0"): error: refusing path '$path'" >&2; exit 2 ;;
    esac
done

DRY_RUN=0
PURGE=0

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --purge) PURGE=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "uninstall.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

say() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }

quote() {
    case "$1" in
        '' | *[!A-Za-z0-9_./=:,@+%-]*) printf "'%s'" "${1//\'/\'\\\'\'}" ;;
        *) printf '%s' "$1" ;;
    esac
}

run() {
    local word line="+"
    for word in "$@"; do
        line+=" $(quote "$word")"
    done
    printf '%s\n' "$line"
    if [ "$DRY_RUN" -eq 0 ]; then
        "$@"
    fi
}

if [ "$DRY_RUN" -eq 1 ]; then
    say "dry run: nothing will be changed"
elif [ "$(id -u)" -ne 0 ]; then
    echo "uninstall.sh: error: run as root: sudo $0" >&2
    exit 1
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
