"""Exceptions raised for libtilecast's errors, one class per enum tc_error.

Each carries the library's message (tc_last_error(), which names the file,
line, column or value that was wrong) and the numeric code.
"""


class TilecastError(Exception):
    """A libtilecast call failed. `code` is the negative enum tc_error."""

    code = 0
    name = "error"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidError(TilecastError, ValueError):
    """Bad argument or value (TC_ERR_INVALID)."""
    code = -1


class OutOfMemoryError(TilecastError, MemoryError):
    """TC_ERR_NOMEM."""
    code = -2


class TilecastIOError(TilecastError, OSError):
    """A file could not be read or written (TC_ERR_IO)."""
    code = -3


class ParseError(TilecastError, ValueError):
    """Malformed input: YAML, CSV, log (TC_ERR_PARSE)."""
    code = -4


class NotFoundError(TilecastError, LookupError):
    """Unknown GPU id, shape not stored, ... (TC_ERR_NOT_FOUND)."""
    code = -5


class UnsupportedError(TilecastError):
    """E.g. a dtype the GPU does not support (TC_ERR_UNSUPPORTED)."""
    code = -6


class DatabaseError(TilecastError):
    """SQLite error (TC_ERR_DB)."""
    code = -7


class SchemaError(DatabaseError):
    """Not a tilecast database, a newer schema, or corrupt (TC_ERR_SCHEMA)."""
    code = -8


class DeviceError(TilecastError):
    """GPU runtime or library error (TC_ERR_DEVICE)."""
    code = -9


class RangeError(TilecastError, ValueError):
    """Value out of range: overflow, zero, negative (TC_ERR_RANGE)."""
    code = -10


_BY_CODE = {cls.code: cls for cls in (
    InvalidError, OutOfMemoryError, TilecastIOError, ParseError, NotFoundError,
    UnsupportedError, DatabaseError, SchemaError, DeviceError, RangeError)}


def error_class(code):
    """The exception class for a negative enum tc_error."""
    return _BY_CODE.get(code, TilecastError)
