"""Secrets never leave: the one home for redaction. What refill is configured with and must
not repeat (the webhook's URL, whose path or query holds its token) is replaced in every
message that can leave the process: an error, a log line, a row of ops.notification_outbox,
the command's output. A URL is shown as `scheme://host/…`.

Redaction replaces the secret's text wherever it occurs, and for a URL each part an error
may quote on its own: the path and what follows (http.client quotes the path of an invalid
URL), the query, the user and password, and each long path segment or query value.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable, Mapping

WEBHOOK_URL_ENV = "REFILL_WEBHOOK_URL"
# The settings whose values are secrets, by their environment variable.
SECRET_ENVS = (WEBHOOK_URL_ENV,)
REDACTED = "…"
# A path segment or a query value this long, not letters only, may be a token on its own
# ("services" and "webhooks" are names).
TOKEN_LENGTH = 8


def configured_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the secret settings that are set."""
    environ = os.environ if environ is None else environ
    return [environ[name] for name in SECRET_ENVS if environ.get(name, "").strip()]


def shown_url(url: str) -> str:
    """What a message may say of a URL: its scheme and host, `scheme://host/…`."""
    parts = _url_parts(url)
    host = parts.hostname if parts is not None else None
    if parts is None or not parts.scheme or not host:
        return REDACTED
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number: left out
        port = ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}/{REDACTED}"


def redacted(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` with every secret (by default the configured ones) and every part of one that
    an error may quote on its own replaced."""
    secrets = configured_secrets() if secrets is None else list(secrets)
    replacements: dict[str, str] = {}
    for secret in filter(str.strip, secrets):
        for part in _secret_parts(secret):
            replacements.setdefault(part, REDACTED)
        replacements[secret] = replacements[secret.strip()] = shown_url(secret)
    for part, replacement in list(replacements.items()):
        # as a message quotes it: repr() escapes a control character (`\n` for a newline)
        replacements.setdefault(repr(part)[1:-1], replacement)
    for part in sorted(replacements, key=len, reverse=True):  # the whole before its parts
        if part:
            text = text.replace(part, replacements[part])
    return text


def _secret_parts(secret: str) -> set[str]:
    """The parts of a secret URL an error may quote apart from it (its user and password,
    and those of at least TOKEN_LENGTH characters: the path and what follows, the query,
    each path segment and query value but a word of letters only), as they are and
    percent-encoded; none for a secret that is not a URL (it is replaced whole)."""
    secret = secret.strip()
    parts = _url_parts(secret)
    if parts is None or not parts.scheme or not parts.netloc:
        return set()
    found = {secret.split(parts.netloc, 1)[1], parts.path, parts.query, parts.fragment}
    words = parts.path.split("/") + [value for _, value in urllib.parse.parse_qsl(parts.query)]
    found |= {word for word in words if not word.isalpha()}
    found = {part for part in found if len(part) >= TOKEN_LENGTH}
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        found |= {part for part in (userinfo, *userinfo.split(":", 1)[1:]) if len(part) >= 3}
    quoted = {urllib.parse.quote(part, safe=safe) for part in found for safe in ("/", "")}
    return found | quoted | {urllib.parse.unquote(part) for part in found}


def _url_parts(url: str) -> urllib.parse.SplitResult | None:
    try:
        return urllib.parse.urlsplit(url.strip())
    except ValueError:  # an invalid IPv6 host
        return None
