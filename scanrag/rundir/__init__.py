"""The run folder: file names, the lock, atomic and scrubbed writes, typed readers.

One module owns the layout of ``runs/<stamp>_<name>/`` (:class:`RunDir`); the runner, the
scoring stage, ``scanrag score``, the report and the exporters all read and write through it.
"""

from scanrag.rundir.files import (
    DiskFullError,
    JsonlLog,
    RowKey,
    RunDirError,
    disk_full_reason,
    iter_jsonl,
    read_json,
    row_key,
    write_atomic,
    write_json,
)
from scanrag.rundir.folder import RunDir
from scanrag.rundir.index import RowIndex, digest_usage, row_digest

__all__ = [
    "DiskFullError",
    "JsonlLog",
    "RowIndex",
    "RowKey",
    "RunDir",
    "RunDirError",
    "digest_usage",
    "disk_full_reason",
    "iter_jsonl",
    "read_json",
    "row_digest",
    "row_key",
    "write_atomic",
    "write_json",
]
