"""The network cause behind a provider error: refused connection, DNS failure, reset, TLS.

litellm wraps a failed connection in an ``InternalServerError`` with status 500 ("Connection
error."), the OpenAI SDK in an ``APIConnectionError``, httpx in a ``ConnectError``; the real
cause (``ConnectionRefusedError``, ``socket.gaierror`` ...) sits at the end of the exception
chain. :func:`network_cause` walks that chain so an error message says what went wrong on the
wire instead of a server error that never happened.
"""

from __future__ import annotations

import re
import socket
import ssl
from collections.abc import Iterator

_ADDRESS = re.compile(r"\('([^']+)', (\d+)\)")
_HOST = re.compile(r"host ([^\s:]+(?::\d+)?)")


def chain(exc: BaseException, limit: int = 12) -> Iterator[BaseException]:
    """``exc`` and its causes (``__cause__``, else ``__context__``), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < limit:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _where(exc: BaseException) -> str:
    text = str(exc)
    found = _ADDRESS.search(text)
    if found:
        return f" {found.group(1)}:{found.group(2)}"
    host = _HOST.search(text)
    return f" {host.group(1)}" if host else ""


def network_cause(exc: BaseException) -> str | None:
    """What failed on the network under ``exc``, in words, or ``None`` when nothing did."""
    causes = list(chain(exc))
    where = next((w for w in (_where(c) for c in causes) if w), "")
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused by{where or ' the server'} (is the server running?)"
        if isinstance(cause, socket.gaierror):
            reason = cause.strerror or str(cause)
            return f"DNS lookup failed for{where or ' the server'} ({reason})"
        if isinstance(cause, ConnectionResetError):
            return f"connection reset by{where or ' the server'}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS handshake with{where or ' the server'} failed ({cause.reason or cause})"
    for cause in causes:
        name = type(cause).__name__
        if name in ("ConnectError", "ClientConnectorError") or (
            isinstance(cause, ConnectionError) and not isinstance(cause, TimeoutError)
        ):
            detail = str(cause).split(" ssl:", 1)[0].strip() or name
            return f"could not connect{where and ' to' + where}: {detail}"
    return None


__all__ = ["chain", "network_cause"]
