"""Secrets never leave: the webhook's URL (its path or query holds the token) is replaced,
in every message refill lets out, by `scheme://host/…`, and so is each part of it an error
quotes on its own (refill.rules.redaction, the one home of the rule)."""

from __future__ import annotations

import pytest

from refill.rules import redaction

TOKEN = "T0KEN-4f9c2a7e"
SECRET_URL = f"https://refill:{TOKEN}@hooks.example.com:8443/services/{TOKEN}/B02?sig={TOKEN}x"


@pytest.mark.parametrize(
    "quoted",
    [
        SECRET_URL,  # whole, as urllib's errors quote a URL
        f"/services/{TOKEN}/B02?sig={TOKEN}x",  # what follows the host
        f"/services/{TOKEN}/B02",  # the path, as http.client quotes an invalid one
        TOKEN,  # a path segment alone
        f"{TOKEN}x",  # a query value alone
        f"refill:{TOKEN}",  # the user and password
        f"/services/{TOKEN}/B02".replace("/", "%2F"),  # percent-encoded
    ],
)
def test_no_part_of_the_secret_url_an_error_may_quote_is_left(quoted):
    message = f"webhook failed: {quoted!r} (see the log)"

    shown = redaction.redacted(message, [SECRET_URL])

    assert TOKEN not in shown and "%2F" not in shown
    assert shown.startswith("webhook failed: ") and shown.endswith(" (see the log)")


def test_a_url_is_shown_as_its_scheme_and_host():
    assert redaction.shown_url(SECRET_URL) == "https://hooks.example.com:8443/…"
    assert redaction.redacted(f"posting to {SECRET_URL}", [SECRET_URL]) == (
        "posting to https://hooks.example.com:8443/…"
    )


def test_a_token_with_a_control_character_is_replaced_as_a_message_escapes_it():
    # GIVEN a URL read from a file with its newline inside it, as http.client quotes it
    url = f"http://127.0.0.1:9/hooks/{TOKEN}\nrest"
    message = "URL can't contain control characters. " + repr(f"/hooks/{TOKEN}\nrest")

    assert TOKEN not in redaction.redacted(message, [url])


def test_a_value_that_is_not_a_url_is_replaced_whole():
    assert (
        redaction.redacted(
            f"unknown url type: 'hooks.example.com/{TOKEN}'", [f"hooks.example.com/{TOKEN}"]
        )
        == "unknown url type: '…'"
    )


def test_a_message_without_a_secret_is_left_as_it_is():
    message = "daily 2026-01-08: published 1 day(s); see logs/dbt.log for /services"
    assert redaction.redacted(message, [SECRET_URL]) == message
    assert redaction.redacted(message, []) == message


def test_the_configured_secrets_are_the_webhook_url_when_set(monkeypatch):
    monkeypatch.setenv(redaction.WEBHOOK_URL_ENV, SECRET_URL)
    assert redaction.configured_secrets() == [SECRET_URL]
    assert TOKEN not in redaction.redacted(f"failed: {SECRET_URL}")
    monkeypatch.delenv(redaction.WEBHOOK_URL_ENV)
    assert redaction.configured_secrets() == []
