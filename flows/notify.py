"""Notifications, exactly once: an outbox row per idempotency key, then delivery.

A notification is first a row in ops.notification_outbox whose primary key is its
idempotency key (flow, logical date, outcome, code version). A retry or a rerun
that would say the same thing finds the key and adds nothing; delivery sends only
rows not yet marked sent. Sinks: the run's log, always; a webhook when
REFILL_WEBHOOK_URL is set, with the key in an `Idempotency-Key` header so a
receiver can drop the rare repeat after a crash between sending and marking.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import date

from flows.ops import utc_now

WEBHOOK_ENV = "REFILL_WEBHOOK_URL"
log = logging.getLogger("refill.notify")


@dataclass(frozen=True)
class Notification:
    flow_name: str
    logical_date: date | None
    outcome: str  # failed | succeeded | not ready | ...
    code_version: str
    message: str

    @property
    def idempotency_key(self) -> str:
        day = self.logical_date.isoformat() if self.logical_date else "-"
        return f"{self.flow_name}:{day}:{self.outcome}:{self.code_version}"


def enqueue(connection, notification: Notification) -> bool:
    """Add the notification unless its key is already there. True when it is new."""
    inserted = connection.execute(
        "insert into ops.notification_outbox (idempotency_key, flow_name, logical_date, outcome, "
        "code_version, message, created_at) values (?, ?, ?, ?, ?, ?, ?) "
        "on conflict do nothing returning idempotency_key",
        [
            notification.idempotency_key,
            notification.flow_name,
            notification.logical_date,
            notification.outcome,
            notification.code_version,
            notification.message,
            utc_now(),
        ],
    ).fetchall()
    return bool(inserted)


def deliver_pending(connection, logger: logging.Logger | None = None) -> int:
    """Send every unsent notification to the sinks; mark each one sent. Returns how many."""
    logger = logger or log
    url = os.environ.get(WEBHOOK_ENV)
    pending = connection.execute(
        "select idempotency_key, flow_name, logical_date, outcome, code_version, message "
        "from ops.notification_outbox where sent_at is null order by created_at"
    ).fetchall()
    delivered = 0
    for key, flow_name, logical_date, outcome, code_version, message in pending:
        level = logging.ERROR if outcome != "succeeded" else logging.INFO
        logger.log(level, "notify [%s] %s", key, message)
        error = None
        if url:
            payload = {
                "idempotency_key": key,
                "flow": flow_name,
                "logical_date": logical_date.isoformat() if logical_date else None,
                "outcome": outcome,
                "code_version": code_version,
                "message": message,
            }
            error = _post(url, key, payload)
        if error is None:
            connection.execute(
                "update ops.notification_outbox set sent_at = ?, "
                "delivery_attempts = delivery_attempts + 1 where idempotency_key = ?",
                [utc_now(), key],
            )
            delivered += 1
        else:
            logger.warning("webhook delivery of %s failed: %s (kept for the next run)", key, error)
            connection.execute(
                "update ops.notification_outbox set delivery_attempts = delivery_attempts + 1, "
                "last_error = ? where idempotency_key = ?",
                [error, key],
            )
    return delivered


def _post(url: str, key: str, payload: dict) -> str | None:
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", "Idempotency-Key": key},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            if 200 <= response.status < 300:
                return None
            return f"HTTP {response.status}"
    except (urllib.error.URLError, OSError) as error:
        return str(error)
