"""The model-server tests wait as long as the machine needs (issue 31.11): a fresh-clone
``make test`` at a load average of 10-16 got ``model_error`` from the 135M server because the
call (no retry) had the idle machine's two minutes; the waits are sized to the load now, a
failed server start is tried again and a first call is made before the tests' own.

No server is started here: the start is replaced by fakes, the load by a patched
``os.getloadavg``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

import tests.conftest as shared


@pytest.mark.parametrize(
    ("load", "cores", "factor"),
    [((0.3, 0, 0), 2, 1.0), ((16.0, 0, 0), 2, 8.0), ((10.0, 0, 0), 4, 2.5), ((500, 0, 0), 2, 20)],
)
def test_waits_grow_with_the_load(
    monkeypatch: pytest.MonkeyPatch, load: tuple[float, ...], cores: int, factor: float
) -> None:
    monkeypatch.setattr(shared.os, "getloadavg", lambda: load)
    monkeypatch.setattr(shared.os, "cpu_count", lambda: cores)
    assert shared.machine_slowness() == factor
    assert shared.sized(120) == 120 * factor


def test_the_degraded_server_test_gives_its_call_the_sized_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """The test keeps ``max_retries: 0`` (one call per item, asserted) and its assertions; its
    call's timeout follows the load."""
    import yaml

    pytest.importorskip("llama_cpp.server.app", reason="the module skips without it")
    from tests.scanrag.runner import test_degraded_server as degraded

    monkeypatch.setattr(shared.os, "getloadavg", lambda: (16.0, 0, 0))
    monkeypatch.setattr(shared.os, "cpu_count", lambda: 2)
    config = yaml.safe_load(degraded._config(tmp_path, "http://127.0.0.1:9/v1").read_text())
    entry = config["models"]["agents"]["reader"]
    assert entry["timeout_s"] == 960 and config["runner"]["llm"]["max_retries"] == 0


@pytest.fixture
def parity(bench_script: Any) -> Any:
    return bench_script("server_parity")


def _fake_starts(outcomes: list[str | None], seen: list[str]) -> Any:
    @contextlib.contextmanager
    def started(*args: Any) -> Iterator[tuple[str, str | None]]:
        base = f"http://127.0.0.1:{9000 + len(seen)}/v1"
        seen.append(base)
        yield base, outcomes.pop(0)

    return started


def test_a_failed_start_is_tried_again_on_a_new_port(
    parity: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    monkeypatch.setattr(parity, "_started", _fake_starts(["did not answer", None], seen))
    with parity.llama_server("m", attempts=2) as base:
        assert base == seen[1] and len(seen) == 2


def test_starts_past_their_attempts_fail_with_every_reason(
    parity: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    monkeypatch.setattr(parity, "_started", _fake_starts(["exited with 1", "no answer"], seen))
    reasons = r"2 attempt\(s\): \['exited with 1', 'no answer'\]"
    with pytest.raises(RuntimeError, match=reasons), parity.llama_server("m", attempts=2):
        pass


def test_a_first_call_is_made_before_the_server_is_handed_over(
    parity: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    calls: list[tuple[str, float]] = []
    monkeypatch.setattr(parity, "_started", _fake_starts([None, None], seen))

    def warm(api_base: str, model: str, timeout_s: float) -> str | None:
        calls.append((api_base, timeout_s))
        return "the first call failed" if len(calls) == 1 else None

    monkeypatch.setattr(parity, "warm_up", warm)
    with parity.llama_server("m", attempts=2, warm_up_s=300.0) as base:
        assert base == seen[1]
    assert calls == [(seen[0], 300.0), (seen[1], 300.0)]
