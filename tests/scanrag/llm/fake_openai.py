"""A small OpenAI-compatible chat server on 127.0.0.1 for tests, with fault modes.

``FakeOpenAIServer`` answers ``POST <prefix>/chat/completions`` (and ``GET <prefix>/models``)
from a thread. Every request body and its headers are recorded. What a call gets is decided by
a queue of *modes* (consumed one per request), then by ``default``:

- ``"ok"``: a normal reply (after ``delay_s``) whose content comes from ``responder(body)``
  (by default a minimal instance of the request's JSON schema, else ``"ok"``);
- ``"rate_limit"``: HTTP 429 with ``Retry-After: <retry_after>``;
- ``"server_error"``: HTTP 500 with an OpenAI-style error body;
- ``"hang"``: no answer for ``hang_s`` seconds (or until the server stops), then a reply;
- ``"not_json"``: HTTP 200 with an HTML body;
- ``"empty"``: a reply whose content is the empty string;
- ``"prose"``: a reply in plain prose, whatever format was asked for;
- ``"length"``: a reply cut by the token limit (``finish_reason: length``);
- ``"unauthorized"``: HTTP 401 whose error message quotes the key the request sent (as some
  servers do), to show that a key is masked wherever it comes back;
- ``"overflow"``: HTTP 400 saying the prompt exceeds ``context_window`` tokens.

``model_meta`` adds fields to the model's ``GET <prefix>/models`` entry (``max_model_len``...),
``props`` answers ``GET /props`` (llama.cpp's ``llama-server``), and ``tokenize=True`` answers
``POST /extras/tokenize/count`` (llama-cpp-python's server) with the number of
whitespace-separated pieces of ``input`` (after ``tokenize_delay_s``). ``paths`` records the
method and path of every request, whatever its route.

It binds port 0 on the loopback address only, and ``stop()`` (or leaving the context manager)
releases any request still hanging, so a test never leaves a thread behind.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = (
    "ok",
    "rate_limit",
    "server_error",
    "hang",
    "not_json",
    "empty",
    "prose",
    "length",
    "unauthorized",
    "overflow",
)
PROSE = "The answer is probably on the third page, but I am not sure."

Responder = Callable[[dict[str, Any]], str]


def schema_instance(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A minimal value valid against ``schema`` (required properties only)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return schema_instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return schema_instance(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in props]
        return {k: schema_instance(props[k], defs) for k in required}
    if kind == "array":
        return []
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "fake answer"


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for, in any of the response_format shapes."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    if fmt.get("type") == "json_object":
        return fmt.get("schema")
    return None


def default_responder(body: dict[str, Any]) -> str:
    schema = schema_of(body)
    return json.dumps(schema_instance(schema)) if schema else "ok"


class FakeOpenAIServer:
    """See the module docstring. Use as a context manager, or ``start()`` / ``stop()``."""

    def __init__(
        self,
        modes: Iterable[str] = (),
        *,
        default: str = "ok",
        responder: Responder | None = None,
        retry_after: str = "2",
        hang_s: float = 30.0,
        delay_s: float = 0.0,
        prefix: str = "/v1",
        model_name: str = "fake-model",
        model_meta: dict[str, Any] | None = None,
        props: dict[str, Any] | None = None,
        tokenize: bool = False,
        tokenize_delay_s: float = 0.0,
        context_window: int = 2048,
    ) -> None:
        for mode in (*modes, default):
            if mode not in MODES:
                raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
        self.modes: deque[str] = deque(modes)
        self.default = default
        self.responder = responder or default_responder
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.delay_s = delay_s
        self.prefix = prefix.rstrip("/")
        self.model_name = model_name
        self.model_meta = dict(model_meta or {})
        self.props = props
        self.tokenize = tokenize
        self.tokenize_delay_s = tokenize_delay_s
        self.context_window = context_window
        self.tokenized: list[str] = []
        self.paths: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def start(self) -> FakeOpenAIServer:
        server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ behavior

    def next_mode(self, body: dict[str, Any], headers: dict[str, str]) -> str:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.arrivals.append(time.monotonic())
            return self.modes.popleft() if self.modes else self.default

    def completion(self, body: dict[str, Any], content: str, finish: str = "stop") -> bytes:
        reply = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model_name),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": 11,
                "completion_tokens": max(1, len(content.split())),
                "total_tokens": 11 + max(1, len(content.split())),
            },
        }
        return json.dumps(reply).encode()

    def wait_or_stop(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that timed out and hung up is expected here


@contextlib.contextmanager
def server_factory() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """``make(*modes, **kw)`` starts a server; every one started is stopped on exit."""
    started: list[FakeOpenAIServer] = []

    def make(*modes: str, **kw: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(modes, **kw).start()
        started.append(server)
        return server

    try:
        yield make
    finally:
        for server in started:
            server.stop()


def tiny_synthetic(limit: int) -> dict[str, Any]:
    """A config dataset: ``limit`` qa questions of one generated 10-page report."""
    options = {"min_pages": 10, "max_pages": 10, "scan_docs": 0}
    return {
        "synthetic": {"seed": 0, "docs": 1, "options": options},
        "tasks": ["qa"],
        "limit": limit,
    }


def _error_body(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "code": None}}).encode()


def _handler_for(fake: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(
            self, status: int, body: bytes, ctype: str = "application/json", **headers: str
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                return

        def do_GET(self) -> None:
            fake.paths.append(f"GET {self.path}")
            if self.path.rstrip("/") == f"{fake.prefix}/models":
                entry = {"id": fake.model_name, "object": "model", **fake.model_meta}
                data = {"object": "list", "data": [entry]}
                self._send(200, json.dumps(data).encode())
            elif self.path.rstrip("/") == "/props" and fake.props is not None:
                self._send(200, json.dumps(fake.props).encode())
            else:
                self._send(404, _error_body(f"no route {self.path}", "not_found"))

        def do_POST(self) -> None:
            fake.paths.append(f"POST {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") == "/extras/tokenize/count" and fake.tokenize:
                text = str(json.loads(raw).get("input", ""))
                fake.tokenized.append(text)
                fake.wait_or_stop(fake.tokenize_delay_s)
                self._send(200, json.dumps({"count": len(text.split())}).encode())
                return
            if self.path.rstrip("/") != f"{fake.prefix}/chat/completions":
                self._send(404, _error_body(f"no route {self.path}", "not_found"))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(400, _error_body("request body is not JSON", "invalid_request"))
                return
            mode = fake.next_mode(body, {k.lower(): v for k, v in self.headers.items()})
            fake.enter()
            try:
                self._reply(mode, body)
            finally:
                fake.leave()

        def _reply(self, mode: str, body: dict[str, Any]) -> None:
            if mode == "unauthorized":
                key = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                message = f"Incorrect API key provided: {key}. Check the key of this server."
                self._send(401, _error_body(message, "invalid_request_error"))
            elif mode == "rate_limit":
                self._send(
                    429,
                    _error_body("Rate limit reached, slow down", "rate_limit_exceeded"),
                    Retry_After=fake.retry_after,
                )
            elif mode == "server_error":
                self._send(500, _error_body("the model crashed", "server_error"))
            elif mode == "not_json":
                self._send(200, b"<html><body>Bad gateway page</body></html>", "text/html")
            elif mode == "empty":
                self._send(200, fake.completion(body, ""))
            elif mode == "prose":
                self._send(200, fake.completion(body, PROSE))
            elif mode == "length":
                self._send(200, fake.completion(body, '{"pages": [1, 2, 3, 4', "length"))
            elif mode == "overflow":
                message = (
                    f"This model's maximum context length is {fake.context_window} tokens. "
                    "However, your messages resulted in more tokens."
                )
                self._send(400, _error_body(message, "invalid_request_error"))
            else:
                fake.wait_or_stop(fake.hang_s if mode == "hang" else fake.delay_s)
                self._send(200, fake.completion(body, fake.responder(body)))

    return Handler
