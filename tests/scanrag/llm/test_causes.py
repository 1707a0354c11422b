"""The network cause under a wrapped provider error, and how ``describe`` reports it."""

from __future__ import annotations

import socket

from scanrag.llm.causes import network_cause
from scanrag.llm.retry import describe


class WrappedError(Exception):
    """Stands for litellm's InternalServerError: a status of 500 over a connection error."""

    status_code = 500


def _wrapped(cause: BaseException) -> WrappedError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise WrappedError(
                "InternalServerError: OpenAIException - Connection error."
            ) from inner
    except WrappedError as outer:
        return outer


def test_refused_connection_names_the_address() -> None:
    error = _wrapped(ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)"))
    text = describe(error)
    assert text == "connection refused by 127.0.0.1:9 (is the server running?)"


def test_dns_failure() -> None:
    error = _wrapped(socket.gaierror(-2, "Name or service not known"))
    assert describe(error).startswith("DNS lookup failed for the server (Name or service")


def test_timeout_in_the_chain_is_a_timeout() -> None:
    assert describe(_wrapped(TimeoutError("read timed out"))) == "timed out"


def test_a_real_http_status_stays_an_http_status() -> None:
    error = WrappedError("the model crashed")
    assert network_cause(error) is None
    assert describe(error) == "server error (HTTP 500): the model crashed"
