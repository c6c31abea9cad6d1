#!/bin/sh
# Run by `meson install` (meson.add_install_script): refreshes the dynamic
# linker's cache after a root install, so that a program linked against the
# freshly installed libtilecast (through pkg-config) runs without a manual
# `ldconfig`; meson 1.0 does not do it. Prefixes outside the linker's
# directories need no cache: the pkg-config file then carries an rpath
# (predictor/meson.build). Staged installs (DESTDIR) are left to the
# package manager.
[ -n "${DESTDIR:-}" ] && exit 0
PATH=$PATH:/sbin:/usr/sbin
if [ "$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null 2>&1; then
    ldconfig || echo "tilecast: ldconfig failed; run it by hand" >&2
fi
exit 0
