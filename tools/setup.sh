#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), builds tilecast in ./build,
# installs it into /usr/local (the command on PATH, the library with
# ldconfig run, the Python package in /usr/local/lib/python3*/dist-packages,
# the data in /usr/local/share/tilecast) and runs the main job on the shipped
# data. Run as root or with sudo.
#   tools/setup.sh              install the packages, build, install, predict
#   tools/setup.sh --deps       only install the packages
#   tools/setup.sh --no-install build and predict from ./build only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential meson ninja-build pkg-config clang
    libsqlite3-dev libyaml-dev libjansson-dev check libopenblas-dev
    sqlite3 valgrind gnuplot-nox python3 slurm-wlm munge xz-utils help2man bash-completion
)
case "${1:-}" in
"" | --deps | --no-install) ;;
-h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "setup.sh: unknown option $1 (--deps, --no-install, --help)" >&2; exit 1 ;;
esac
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing: ${missing[*]}"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps" ] && exit 0

[ -f build/build.ninja ] || meson setup build
ninja -C build

tc=build/tools/tilecast
if [ "${1:-}" != "--no-install" ]; then
    # meson install runs ldconfig (tools/post-install.sh)
    $sudo meson install -C build --quiet
    tc=tilecast
    hash -r
    command -v tilecast >/dev/null || { echo "setup.sh: tilecast is installed but not on PATH" >&2; exit 1; }
    pydir=$(meson introspect build --installed | python3 -c '
import json, os, sys
print(next((os.path.dirname(os.path.dirname(d)) for d in json.load(sys.stdin).values()
            if d.endswith("/tilecast/_installed.py")), ""))')
    echo "Installed into $(dirname "$(dirname "$(command -v tilecast)")")"
    if [ -n "$pydir" ] && ! (cd / && python3 -c 'import tilecast' 2>/dev/null); then
        echo "Note: $(command -v python3) does not search $pydir; to import tilecast:"
        echo "  export PYTHONPATH=$pydir"
    fi
fi

echo
echo "$ $tc predict gemm --gpu h100-sxm5-80gb --dtype fp16 --explain 8192 10944 4096"
"$tc" predict gemm --gpu h100-sxm5-80gb --dtype fp16 --explain 8192 10944 4096
