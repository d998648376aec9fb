# Shared by install.sh and uninstall.sh (sourced, not run): the paths they act
# on, the refusal of dangerous paths, the options both take, and `run`, which
# prints every change and makes it unless --dry-run.
#
# Paths can be moved for testing with BOARDCAM_PREFIX (default /opt/boardcam),
# BOARDCAM_ETC (/etc/boardcam), BOARDCAM_STATE (/var/lib/boardcam) and
# BOARDCAM_UNIT_DIR (/etc/systemd/system).

# The script that sourced this file: its --help is its own top comment.
SCRIPT_PATH="${BASH_SOURCE[1]:-$0}"
SCRIPT_NAME="$(basename "$SCRIPT_PATH")"

PREFIX="${BOARDCAM_PREFIX:-/opt/boardcam}"
ETC_DIR="${BOARDCAM_ETC:-/etc/boardcam}"
STATE_DIR="${BOARDCAM_STATE:-/var/lib/boardcam}"
UNIT_DIR="${BOARDCAM_UNIT_DIR:-/etc/systemd/system}"
SERVICE_USER=boardcam

# rm -rf and install -D act on these: refuse anything but a real absolute path.
for path in "$PREFIX" "$ETC_DIR" "$STATE_DIR" "$UNIT_DIR"; do
    case "$path" in
        /*[!/]*) ;;
        *) echo "$SCRIPT_NAME: error: refusing path '$path'" >&2; exit 2 ;;
    esac
done

DRY_RUN=0

# --help prints the comment block at the top of the script.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SCRIPT_PATH"; }

# The options every script takes; anything else it does not know is refused.
common_option() {
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "$SCRIPT_NAME: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
}

say() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
fail() { printf '%s: error: %s\n' "$SCRIPT_NAME" "$*" >&2; exit 1; }

# Every change goes through run: printed always, executed unless --dry-run.
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
