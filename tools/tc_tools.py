"""Helpers shared by the accuracy scripts in tools/ (cv-eval.py,
e2e-eval.py): how they stop with an error, and which tilecast binary and
which folder of measured CSVs they use."""
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(prog, msg, code):
    print("%s: %s" % (prog, msg), file=sys.stderr)
    sys.exit(code)


def tilecast_bin(prog):
    """$TILECAST_BIN, else build/tools/tilecast of this tree, else PATH."""
    env = os.environ.get("TILECAST_BIN")
    if env:
        return env
    built = os.path.join(ROOT, "build", "tools", "tilecast")
    if os.access(built, os.X_OK):
        return built
    found = shutil.which("tilecast")
    if not found:
        die(prog, "no tilecast: build it (ninja -C build) or set TILECAST_BIN", 3)
    return found


def measured_dir(given=None):
    """The measured CSVs: the given folder, else $TILECAST_MEASURED_DATA,
    else build/db/sources (decompressed there by the build)."""
    return given or os.environ.get("TILECAST_MEASURED_DATA") or os.path.join(
        ROOT, "build", "db", "sources")
