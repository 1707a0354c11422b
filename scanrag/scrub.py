"""The one rule that keeps secrets out of everything ScanRAG writes or prints.

A value is a secret when

* it sits under a key named like a secret (``api_key``, ``token``, ``cli_token``, ``secret``,
  ``password``, ``authorization``, ``credential``, ``private_key`` …), whether the key is a
  mapping key, a ``key=value`` / ``key: value`` / ``"key": "value"`` pair inside a text (a
  recorded command line, a YAML or JSON document, a log line) or an HTTP header line; or
* it is the value of an environment variable named like a secret (taken when the scrubber is
  built); or
* it was registered as a secret (:func:`register_secret`): whatever its variable is called,
  the key of every model entry's ``api_key_env`` and every header value it expands, each
  value the config or a ``--set`` puts under a secret-named key, registered when the config
  is loaded and whenever the gateway resolves a key (values under 8 characters, such as the
  ``EMPTY`` placeholder of local servers, are not masked by value: they would rewrite
  ordinary words); or
* it is shaped like a provider key (``sk-…``, ``sk-ant-…``, ``AIza…``, ``hf_…``, ``ghp_…``,
  ``xoxb-…``), a bearer token (``Bearer abc…``) or the credentials of a URL
  (``https://user:password@host``).

Each is replaced by ``***``. The run folder (config, manifest, summary, logs), the console,
the report and the response cache's stored replies all go through :func:`scrubber`; the
``scanrag`` command also wraps stdout and stderr (logging and what libraries print included:
:class:`ScrubbedStream`), masking the values it knows and secret-shaped ones.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

MASK = "***"

_NAME = (
    r"api[_-]?key|apikey|secret|passw(?:or)?d|passphrase|authorization|bearer|credentials?|"
    r"access[_-]?token|auth[_-]?token|session[_-]?token|refresh[_-]?token|private[_-]?key|"
    r"client[_-]?secret|cookie"
)
# A key is secret when a secret word appears in it, or when it is or ends in "token"/"key"
# as a word of its own (``token``, ``cli_token``, ``hf-token``, ``x-api-key``).
_SECRET_NAME = re.compile(rf"({_NAME}|(^|[_.-])(token|key)$)", re.IGNORECASE)
_SAFE_NAMES = frozenset(
    {"api_key_env", "key", "run_key", "cache_key", "sort_key", "keys", "token_limit"}
)
# Shapes of secret values, masked even when no environment variable holds them: provider
# keys, bearer tokens, user:password@ in a URL. Each comes with a literal that must occur in
# the text for the pattern to be tried at all (a substring test is far cheaper than a scan).
_SECRET_VALUES = (
    (
        ("sk-", "AIza", "hf_", "gh", "xox"),
        re.compile(
            r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|"
            r"hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[bap]-[A-Za-z0-9-]{10,})\b"
        ),
    ),
    (("Bearer ",), re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}")),
    (("://",), re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
)
# ``name=value``, ``name: value``, ``"name": "value"`` (and header lines) inside free text:
# found from the secret words they must contain, then widened to the whole name.
# Every secret name holds one of these (lower case): the scan looks for them first.
_ANCHORS = (
    "key",
    "token",
    "secret",
    "passw",
    "passphrase",
    "authoriz",
    "bearer",
    "credential",
    "cookie",
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_AFTER_NAME = re.compile(r"""["']?[ \t]*[=:][ \t]*(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s,;}\]"']+)""")
_MIN_SECRET_LEN = 8
# ``${VAR}``: a reference to a variable (a model entry's header value), not a secret.
_ENV_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a key with this name holds a secret (``api_key_env`` names a variable: no)."""
    return name.lower() not in _SAFE_NAMES and bool(_SECRET_NAME.search(name))


def _env_secrets(env: Mapping[str, str]) -> frozenset[str]:
    return frozenset(v for k, v in env.items() if is_secret_name(k) and len(v) >= _MIN_SECRET_LEN)


# Values known to be secrets whatever holds them (insertion-ordered set), process-wide.
_REGISTERED: dict[str, None] = {}
_GENERATION = [0]  # bumped whenever the registered values change


def register_secret(value: Any) -> bool:
    """Mask ``value`` wherever it appears from now on, in every scrubber of this process;
    ``False`` (not registered) for a non-string, a ``${VAR}`` reference, the mask itself or a
    value under 8 characters."""
    if not isinstance(value, str) or len(value) < _MIN_SECRET_LEN or MASK in value:
        return False
    if _ENV_REFERENCE.fullmatch(value):
        return False
    if value not in _REGISTERED:
        _REGISTERED[value] = None
        _GENERATION[0] += 1
    return True


def register_secrets(values: Iterable[Any]) -> None:
    for value in values:
        register_secret(value)


def register_secret_values(data: Any, *, under_secret: bool = False) -> None:
    """Register every string in nested ``data`` that sits under a secret-named key (a config,
    a ``--set`` value): a server that echoes it later is masked too."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            register_secret_values(value, under_secret=under_secret or is_secret_name(str(key)))
    elif isinstance(data, list | tuple):
        for value in data:
            register_secret_values(value, under_secret=under_secret)
    elif under_secret:
        register_secret(data)


def registered_secrets() -> frozenset[str]:
    return frozenset(_REGISTERED)


def forget_registered_secrets() -> None:
    """Drop every registered value (tests)."""
    _REGISTERED.clear()
    _GENERATION[0] += 1


class Scrubber:
    """Masks secrets in text and in nested data (see the module docstring for the rule).
    Registered values (:func:`register_secret`) are masked by every scrubber, also by one
    built before they were registered."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.env_values = _env_secrets(env)
        self._generation = -1
        self._values = sorted(self.env_values, key=len, reverse=True)

    def _all_values(self) -> list[str]:
        if self._generation != _GENERATION[0]:
            self._generation = _GENERATION[0]
            found = self.env_values | frozenset(_REGISTERED)
            self._values = sorted(found, key=len, reverse=True)
        return self._values

    def text(self, text: str) -> str:
        return _mask_pairs(self.values(text))

    def values(self, text: str) -> str:
        """``text`` with known secret values and secret-shaped values masked (not the
        ``name=value`` pairs: for free text such as a usage line, ``NAME.KEY=VALUE``)."""
        for value in self._all_values():
            if value in text:
                text = text.replace(value, MASK)
        for literals, pattern in _SECRET_VALUES:
            if any(literal in text for literal in literals):
                text = pattern.sub(MASK, text)
        return text

    def data(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                k: (MASK if _is_secret_value(str(k), v) else self.data(v)) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


def _is_secret_value(name: str, value: Any) -> bool:
    if value in (None, "") or not is_secret_name(name):
        return False
    return not (isinstance(value, str) and _ENV_REFERENCE.fullmatch(value))


def _anchor_spans(text: str) -> list[tuple[int, int]]:
    """Where the secret words occur in ``text`` (case-insensitive), in order."""
    lower = text.lower()
    spans = []
    for anchor in _ANCHORS:
        at = lower.find(anchor)
        while at >= 0:
            spans.append((at, at + len(anchor)))
            at = lower.find(anchor, at + 1)
    return sorted(spans)


def _mask_pairs(text: str) -> str:
    """Mask the value of every ``name=value`` / ``name: value`` pair whose name is secret."""
    out: list[str] = []
    done = 0  # text[:done] is already in ``out``
    for start, end in _anchor_spans(text):
        if start < done:
            continue
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < len(text) and text[end] in _NAME_CHARS:
            end += 1
        pair = _AFTER_NAME.match(text, end)
        if pair is None or not is_secret_name(text[start:end]):
            continue
        value = pair.group("value")
        if value in ('""', "''", "null", "None") or value.strip("\"'") == MASK:
            continue
        if value.strip("\"'").startswith("${"):  # a variable reference, not a secret
            continue
        quote = value[0] if value[:1] in ('"', "'") else ""
        out.append(text[done : pair.start("value")])
        out.append(f"{quote}{MASK}{quote}")
        done = pair.end("value")
    out.append(text[done:])
    return "".join(out)


def masked_paths(value: Any, prefix: str = "") -> list[str]:
    """Dotted paths of the values a scrubber masked in nested data (``runner.settings.x``)."""
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in masked_paths(v, f"{prefix}{k}.")]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in masked_paths(v, f"{prefix}{i}.")]
    return [prefix.rstrip(".")] if value == MASK else []


_DEFAULT: Scrubber | None = None


def scrubber() -> Scrubber:
    """The process-wide scrubber, rebuilt when the environment's secret values change (a
    key exported after the first use is masked too)."""
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.env_values != _env_secrets(os.environ):
        _DEFAULT = Scrubber()
    return _DEFAULT


def scrub_text(text: str) -> str:
    return scrubber().text(text)


def scrub_data(value: Any) -> Any:
    return scrubber().data(value)


class ScrubbedStream:
    """A text stream (stdout, stderr) whose every ``write`` has the secret values the process
    knows (registered, from the environment, secret-shaped) masked; anything else is the
    wrapped stream's. Messages meant for the console already went through the whole rule
    (``runner.progress``); this catches what libraries print, a server's error echoed."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(scrubber().values(text) if text else text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
