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


# --------------------------------------------------------------------------- values registered


def test_registered_values_are_masked_whatever_holds_them() -> None:
    from scanrag.scrub import forget_registered_secrets, register_secret

    built_before = Scrubber({})
    assert register_secret("pw-Zq81xLmN0aTT")
    for scrub in (built_before, Scrubber({}), scrubber()):
        assert scrub.text("Incorrect API key provided: pw-Zq81xLmN0aTT.") == (
            f"Incorrect API key provided: {MASK}."
        )
        assert scrub.data({"note": ["x pw-Zq81xLmN0aTT"]}) == {"note": [f"x {MASK}"]}
    # placeholders and references are not secrets: masking them would rewrite ordinary text
    assert not register_secret("EMPTY") and not register_secret("${LLMSRV_PW}")
    assert not register_secret(12345678) and not register_secret(MASK)
    forget_registered_secrets()
    assert "pw-Zq81xLmN0aTT" in Scrubber({}).text("pw-Zq81xLmN0aTT")


def test_config_loading_registers_keys_headers_and_secret_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scanrag.config import config_from_dict
    from scanrag.scrub import registered_secrets

    monkeypatch.setenv("LLMSRV_PW", "server-password-1")  # a name the rule would not catch
    monkeypatch.setenv("GATEWAY_ORG", "org-identifier-22")
    monkeypatch.setenv("HDR_TOKEN_VALUE", "header-token-333")
    entry = {
        "model": "openai/m",
        "api_base": "http://127.0.0.1:9/v1",
        "api_key_env": "LLMSRV_PW",
        "extra_headers": {"X-Org": "${GATEWAY_ORG}", "X-Auth-Token": "${HDR_TOKEN_VALUE}"},
    }
    data = {
        "name": "keys",
        "datasets": [{"path": "questions.jsonl"}],
        "strategies": [{"name": "full_doc"}],
        "models": {"agents": {"reader": "srv"}, "entries": {"srv": entry}},
        "runner": {"settings": {"plain": "visible-value-1", "db_secret": "in-the-file-4444"}},
    }
    config_from_dict(data, overrides=["runner.settings.api_password=given-on-the-cli-55"])
    found = registered_secrets()
    for value in (
        "server-password-1",
        "org-identifier-22",
        "header-token-333",
        "in-the-file-4444",
        "given-on-the-cli-55",
    ):
        assert value in found, value
    assert "visible-value-1" not in found
    assert scrubber().text("echo server-password-1 given-on-the-cli-55") == f"echo {MASK} {MASK}"


def test_the_gateway_registers_the_key_it_resolves(monkeypatch: pytest.MonkeyPatch) -> None:
    from scanrag.llm.endpoints import ModelEntry
    from scanrag.scrub import registered_secrets

    entry = ModelEntry(model="openai/m", api_base="http://127.0.0.1:9/v1", api_key_env="K_LATE")
    monkeypatch.setenv("K_LATE", "exported-after-the-config-6")  # set after the config loaded
    assert entry.api_key() == "exported-after-the-config-6"
    assert "exported-after-the-config-6" in registered_secrets()


def test_the_command_line_scrubs_what_it_prints(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from scanrag.scrub import ScrubbedStream, register_secret

    register_secret("printed-secret-777")
    out = io.StringIO()
    stream = ScrubbedStream(out)
    assert stream.write("error: 401 printed-secret-777\n") == len("error: 401 printed-secret-777\n")
    assert out.getvalue() == f"error: 401 {MASK}\n"
    assert stream.getvalue() == out.getvalue()  # anything else is the wrapped stream's
