"""One scrubbing rule, by key name and by value shape, for everything ScanRAG writes."""

from __future__ import annotations

import pytest

from scanrag.scrub import MASK, Scrubber, is_secret_name, masked_paths, scrubber

CASES = [
    ("runner.settings.cli_token=abcdef123", "runner.settings.cli_token=***"),
    ("api_key: xyz123", "api_key: ***"),
    (
        '{"api_key": "abc", "run_key": "k", "max_tokens": 5}',
        '{"api_key": "***", "run_key": "k", "max_tokens": 5}',
    ),
    ("Authorization: Bearer abcdefghijk", "Authorization: *** ***"),
    ("x-api-key: abcd1234", "x-api-key: ***"),
    ("MY_TOKEN=zzz", "MY_TOKEN=***"),
    ("text with password: hunter22 inside", "text with password: *** inside"),
    ("PASSWORD=abc PassWord: d", "PASSWORD=*** PassWord: ***"),
    ("a secret: x; token=y", "a secret: ***; token=***"),
    ("client_secret='s3cr3t'", "client_secret='***'"),
    ("http://bob:pw1234@host:80/v1", "http://***@host:80/v1"),
    ("key sk-abcdefghijklmnopqrstu here", "key *** here"),
    ("ghp_abcdefghijklmnopqrstuvw", "***"),
    # left alone: empty or null values, names that only look like secrets, masked values
    ("token: null", "token: null"),
    ('password=""', 'password=""'),
    ("key=value", "key=value"),
    ("api_key_env: OPENAI_API_KEY", "api_key_env: OPENAI_API_KEY"),
    ("prompt_tokens: 120, run_key: a+b", "prompt_tokens: 120, run_key: a+b"),
    ("api_key: ***", "api_key: ***"),
    ("The key result: revenue grew", "The key result: revenue grew"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_text_rule(text: str, expected: str) -> None:
    assert Scrubber({}).text(text) == expected


def test_environment_values_are_masked_wherever_they_appear() -> None:
    scrub = Scrubber({"MY_SERVICE_TOKEN": "tok-another-secret-42", "HOME": "/root"})
    assert scrub.text("calling with tok-another-secret-42 now") == f"calling with {MASK} now"
    assert scrub.text("/root/x") == "/root/x"  # not a secret-named variable


def test_data_rule_masks_secret_keys_at_any_depth() -> None:
    data = {"runner": {"settings": {"cli_token": "abc", "api_key": None}}, "note": "token=x"}
    out = Scrubber({}).data(data)
    assert out == {
        "runner": {"settings": {"cli_token": MASK, "api_key": None}},
        "note": "token=***",
    }
    assert masked_paths(out) == ["runner.settings.cli_token"]


def test_secret_names() -> None:
    for name in ("api_key", "OPENAI_API_KEY", "token", "hf-token", "password", "Authorization"):
        assert is_secret_name(name), name
    for name in ("api_key_env", "run_key", "max_tokens", "key", "keyboard", "monkey_count"):
        assert not is_secret_name(name), name


def test_the_process_scrubber_follows_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("LATE_SECRET_TOKEN", "exported-after-start-123")
    assert "exported-after-start-123" not in scrubber().text("x exported-after-start-123 y")
