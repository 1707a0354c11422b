"""Moved to :mod:`scanrag.rundir`; these names stay importable from here for one release."""

from scanrag.rundir import (
    DiskFullError,
    JsonlLog,
    RowKey,
    RunDir,
    RunDirError,
    disk_full_reason,
    row_key,
    write_atomic,
    write_json,
)

__all__ = [
    "DiskFullError",
    "JsonlLog",
    "RowKey",
    "RunDir",
    "RunDirError",
    "disk_full_reason",
    "row_key",
    "write_atomic",
    "write_json",
]
