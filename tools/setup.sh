#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), builds tilecast in ./build and
# runs the main job on the shipped data. Run as root or with sudo.
#   tools/setup.sh            install, build, predict
#   tools/setup.sh --deps     only install the packages
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential meson ninja-build pkg-config clang
    libsqlite3-dev libyaml-dev libjansson-dev check libopenblas-dev
    sqlite3 valgrind gnuplot-nox python3 slurm-wlm munge xz-utils
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "Installing: ${missing[*]}"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps" ] && exit 0

[ -f build/build.ninja ] || meson setup build
ninja -C build

echo
echo "$ build/tools/tilecast predict gemm --gpu h100-sxm5-80gb --dtype fp16 --explain 8192 10944 4096"
build/tools/tilecast predict gemm --gpu h100-sxm5-80gb --dtype fp16 --explain 8192 10944 4096
