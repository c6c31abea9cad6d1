"""Reading tilecast databases: validated by libtilecast, queried as plain data."""

import os
import sqlite3
import threading
from ctypes import byref, create_string_buffer

from . import _lib
from ._core import (_check, _dtype, _dtype_name, _frame, _int, _layout, _layout_name, _raise,
                    _struct_dict, _text, source_name)
from ._lib import _P, GemmRow, TC_DB_READONLY, TC_ID_MAX
from .errors import InvalidError

TC_ERR_NOT_FOUND = -5


def _row_dict(row, gpu_id=None):
    d = _struct_dict(row)
    for key in ("dtype", "dtype_c", "compute"):
        d[key] = _dtype_name(d[key])
    d["layout"] = _layout_name(d["layout"])
    d["status"] = _text(_lib.function("tc_status_name")(row.status))
    if gpu_id is not None:
        d["gpu"] = gpu_id
    d["kind"] = "measurement"
    return d


class Database:
    """A tilecast database opened read-only. The library validates the schema
    and refuses a corrupt, foreign or newer file (SchemaError) before anything
    is read; nothing is ever written to it."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._h = None
        self._close = _lib.function("tc_db_close")
        self._lock = threading.Lock()
        self._sql = None
        h = _P()
        # the library says why it refused: NotFoundError for no such file,
        # InvalidError for a directory, TilecastIOError for a file it cannot
        # read, SchemaError for one that is no (valid) tilecast database
        _check(_lib.function("tc_db_open")(os.fsencode(self.path), TC_DB_READONLY, byref(h)))
        self._h = h.value

    def close(self):
        if self._sql is not None:
            self._sql.close()
            self._sql = None
        if getattr(self, "_h", None):
            self._close(self._h)
            self._h = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise InvalidError("%s: database is closed" % self.path, -1)
        return self._h

    @property
    def schema_version(self):
        return _check(_lib.function("tc_db_schema_version")(self._handle()))

    def check(self):
        """Runs SQLite's integrity check and tilecast's own; True if clean,
        else raises with the first problem found."""
        with self._lock:
            _check(_lib.function("tc_db_integrity_check")(self._handle()))
        return True

    def gemm(self, gpu=None, dtype=None, layout=None, as_frame=False):
        """Every ok GEMM measurement, optionally filtered, as a list of dicts
        (or a pandas DataFrame with as_frame=True)."""
        h = self._handle()
        it_new = _lib.function("tc_db_iter_gemm")
        it_next = _lib.function("tc_db_iter_next")
        it_free = _lib.function("tc_db_iter_free")
        rows = []
        with self._lock:
            it = _P()
            _check(it_new(h, gpu.encode() if gpu else None,
                          -1 if dtype is None else _dtype(dtype),
                          -1 if layout is None else _layout(layout), byref(it)))
            try:
                row = GemmRow()
                gpu_id = create_string_buffer(TC_ID_MAX)
                while True:
                    rc = it_next(it, byref(row), gpu_id)
                    if rc < 0:
                        _raise(rc)
                    if rc == 0:
                        break
                    rows.append(_row_dict(row, _text(gpu_id.value)))
            finally:
                it_free(it)
        return _frame(_columns(rows)) if as_frame else rows

    def lookup_gemm(self, gpu, m, n, k, *, dtype="fp16", layout="NN", batch=1):
        """The best ok measurement of exactly this shape, or None."""
        row = GemmRow()
        with self._lock:
            rc = _lib.function("tc_db_lookup_gemm")(
                self._handle(), gpu.encode(), _dtype(dtype), _layout(layout), _int(m, "m"),
                _int(n, "n"), _int(k, "k"), _int(batch, "batch"), byref(row))
        if rc == TC_ERR_NOT_FOUND:
            return None
        _check(rc)
        return _row_dict(row, gpu)

    def query(self, sql, params=(), as_frame=False):
        """Runs a read-only SQL query (after the library validated the file)
        and returns a list of dicts. The connection is read-only, refuses
        writes, and does not let the file's schema run SQL functions."""
        if self._sql is None:
            self._handle()
            uri = "file:%s?mode=ro" % os.path.abspath(self.path).replace("?", "%3f")
            con = sqlite3.connect(uri, uri=True, check_same_thread=False)
            con.execute("PRAGMA query_only = 1")
            try:
                con.execute("PRAGMA trusted_schema = 0")
            except sqlite3.DatabaseError:  # SQLite < 3.31 has no such pragma
                pass
            con.row_factory = sqlite3.Row
            self._sql = con
        with self._lock:
            cur = self._sql.execute(sql, params)
            rows = [dict(r) for r in cur.fetchall()]
        return _frame(_columns(rows)) if as_frame else rows

    def tables(self):
        """Names of the tables and views, for people exploring the schema."""
        return [r["name"] for r in self.query(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _columns(rows):
    cols = {}
    for r in rows:
        for key in r:
            cols.setdefault(key, [])
    for key, col in cols.items():
        col.extend(r.get(key) for r in rows)
    return cols


def open_db(path):
    """Opens a tilecast database read-only (see Database)."""
    return Database(path)


__all__ = ["Database", "open_db", "source_name"]
