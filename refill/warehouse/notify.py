"""Notifications, exactly once: an outbox row per idempotency key, then delivery.

A notification is first a row in ops.notification_outbox whose primary key is its
idempotency key (flow, logical date, outcome, code version, and for a failure, which
failure). A retry or a rerun that would say the same thing finds the key and adds
nothing; a different failure of the same date has another key and is queued too.
Delivery sends only rows not yet marked sent, and runs without the warehouse lock:
tasks.deliver_notifications claims the pending rows for its run under the lock, releases
the warehouse, delivers, then marks. The claim is what keeps two runs delivering at once
(a daily run beside a backfill) from both sending a row the other has not marked yet; a
claim whose run died before marking lapses after CLAIM_LEASE_SECONDS.
Sinks: the run's log, always; a webhook when REFILL_WEBHOOK_URL is set,
with the key in an `Idempotency-Key` header so a receiver can drop the rare repeat
after a crash between sending and marking. A webhook call has a total deadline (not
only urllib's timeout, which bounds each read: a server sending a header line every few
seconds held a delivery for minutes) and a bounded number of tries, per run and in all.
The webhook's URL holds its token: no error, log line or outbox row says more of it than
`scheme://host/…` (refill.rules.redaction).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import http.client
import json
import logging
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from refill.rules.redaction import WEBHOOK_URL_ENV, redacted, shown_url
from refill.warehouse.ops import OUTBOX_LATEST, utc_now

WEBHOOK_ENV = WEBHOOK_URL_ENV
WEBHOOK_TIMEOUT_SECONDS = 5  # one call, connect to the answer's last header, in all
TRIES_PER_RUN = 3  # a run tries a notification this many times, WEBHOOK_BACKOFF apart
WEBHOOK_BACKOFF_SECONDS = (0.5, 1.0)
DELIVERY_BUDGET_SECONDS = 30  # a run spends at most this long delivering, all rows together
MAX_DELIVERY_ATTEMPTS = 9  # then the row stays unsent with its last error, and is not retried
# A claimed row is another run's until it marks it, or until this passes (that run died
# between claiming and marking): well over a run's whole delivery budget.
CLAIM_LEASE_SECONDS = 4 * DELIVERY_BUDGET_SECONDS
log = logging.getLogger("refill.notify")

# Parts of a failure message that differ between two runs failing the same way: run ids,
# process ids, instants, durations, attempt numbers. Dates of days are kept: a failure of
# another day is another failure.
VOLATILE = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\bpid \d+"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d[:\d.+Z]*"
    r"|\b\d+(\.\d+)?s\b"
    r"|\battempt \d+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Notification:
    flow_name: str
    logical_date: date | None
    outcome: str  # failed | succeeded | not ready | ...
    code_version: str
    message: str
    failure: str = ""  # what failed (step and message): tells two failures apart

    @property
    def idempotency_key(self) -> str:
        day = self.logical_date.isoformat() if self.logical_date else "-"
        key = f"{self.flow_name}:{day}:{self.outcome}:{self.code_version}"
        if self.failure:
            key += ":" + failure_fingerprint(self.failure)
        return key


def failure_fingerprint(failure: str) -> str:
    """Equal for two runs failing the same way, different for two different failures."""
    stable = VOLATILE.sub("_", " ".join(failure.split()))
    return hashlib.sha256(stable.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Pending:
    idempotency_key: str
    flow_name: str
    logical_date: date | None
    outcome: str
    code_version: str
    message: str
    delivery_attempts: int


@dataclass(frozen=True)
class Delivery:
    idempotency_key: str
    error: str | None  # None: delivered
    tries: int


def enqueue(connection, notification: Notification) -> bool:
    """Add the notification unless its key is already there. True when it is new."""
    notification = dataclasses.replace(notification, message=redacted(notification.message))
    if getattr(connection, "append_only", False):
        return _enqueue_appending(connection, notification)
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


def _enqueue_appending(connection, notification: Notification) -> bool:
    """An engine without `on conflict` (Spark's parquet): look, then append. The caller
    holds the warehouse's bookkeeping lock, so no other run appends the key in between."""
    (found,) = connection.execute(
        "select count(*) from ops.notification_outbox where idempotency_key = ?",
        [notification.idempotency_key],
    ).fetchone()
    if found:
        return False
    connection.execute(
        "insert into ops.notification_outbox (idempotency_key, flow_name, logical_date, outcome, "
        "code_version, message, created_at, delivery_attempts) values (?, ?, ?, ?, ?, ?, ?, 0)",
        [
            notification.idempotency_key,
            notification.flow_name,
            notification.logical_date,
            notification.outcome,
            notification.code_version,
            notification.message,
            utc_now(),
        ],
    )
    return True


def claim_pending(connection, run_id: str, now: datetime | None = None) -> list[Pending]:
    """The unsent notifications that have delivery attempts left and no live claim, oldest
    first, claimed for `run_id`. The caller holds the warehouse lock, so no other run
    claims the same rows in between; it delivers them without the lock, then
    record_deliveries marks them (and releases the claim of a failed one)."""
    now = now or utc_now()
    lapsed = now - timedelta(seconds=CLAIM_LEASE_SECONDS)
    rows = connection.execute(
        "select idempotency_key, flow_name, logical_date, outcome, code_version, message, "
        f"delivery_attempts from {OUTBOX_LATEST} "
        "where sent_at is null and delivery_attempts < ? "
        "and (claimed_at is null or claimed_at < ?) order by created_at",
        [MAX_DELIVERY_ATTEMPTS, lapsed],
    ).fetchall()
    claimed = [Pending(*row) for row in rows]
    for row in claimed:
        if getattr(connection, "append_only", False):
            connection.execute(
                "insert into ops.notification_outbox (idempotency_key, flow_name, logical_date, "
                "outcome, code_version, message, created_at, sent_at, delivery_attempts, "
                "last_error, claimed_by, claimed_at) "
                "select idempotency_key, flow_name, logical_date, outcome, code_version, message, "
                "created_at, sent_at, delivery_attempts, last_error, ?, ? "
                f"from {OUTBOX_LATEST} where idempotency_key = ?",
                [run_id, now, row.idempotency_key],
            )
        else:
            connection.execute(
                "update ops.notification_outbox set claimed_by = ?, claimed_at = ? "
                "where idempotency_key = ?",
                [run_id, now, row.idempotency_key],
            )
    return claimed


def deliver(pending: list[Pending], logger: logging.Logger | None = None) -> list[Delivery]:
    """Send each notification to the sinks. Holds no warehouse: the caller marks the
    results afterwards (record_deliveries)."""
    logger = logger or log
    url = os.environ.get(WEBHOOK_ENV, "").strip()
    deadline = time.monotonic() + DELIVERY_BUDGET_SECONDS
    results = []
    for row in pending:
        level = logging.ERROR if row.outcome != "succeeded" else logging.INFO
        logger.log(level, "notify [%s] %s", row.idempotency_key, redacted(row.message))
        if not url:
            results.append(Delivery(row.idempotency_key, None, 0))
            continue
        payload = {
            "idempotency_key": row.idempotency_key,
            "flow": row.flow_name,
            "logical_date": row.logical_date.isoformat() if row.logical_date else None,
            "outcome": row.outcome,
            "code_version": row.code_version,
            "message": redacted(row.message),
        }
        tries_left = min(TRIES_PER_RUN, MAX_DELIVERY_ATTEMPTS - row.delivery_attempts)
        delivery = _post_with_retries(url, row.idempotency_key, payload, tries_left, deadline)
        if delivery.error is not None:
            given_up = row.delivery_attempts + delivery.tries >= MAX_DELIVERY_ATTEMPTS
            logger.warning(
                "webhook delivery of %s to %s failed after %d tries: %s (%s)",
                row.idempotency_key,
                shown_url(url),
                delivery.tries,
                delivery.error,
                "given up: it stays unsent in ops.notification_outbox"
                if given_up
                else "kept for the next run",
            )
        results.append(delivery)
    return results


def record_deliveries(connection, results: list[Delivery]) -> None:
    if getattr(connection, "append_only", False):
        _record_deliveries_appending(connection, results)
        return
    for result in results:
        connection.execute(
            "update ops.notification_outbox set "
            "sent_at = case when ? then ? else sent_at end, "
            "delivery_attempts = delivery_attempts + ?, "
            "last_error = coalesce(?, last_error), claimed_by = null, claimed_at = null "
            "where idempotency_key = ?",
            [
                result.error is None,
                utc_now(),
                result.tries,
                result.error,
                result.idempotency_key,
            ],
        )


def _record_deliveries_appending(connection, results: list[Delivery]) -> None:
    """An engine without update (Spark's parquet): each delivery appends the key's next
    state, a copy of its latest row with the delivery filled in; readers take the newest
    row per key (ops.OUTBOX_LATEST), so a sent notification is never read as pending."""
    for result in results:
        connection.execute(
            "insert into ops.notification_outbox (idempotency_key, flow_name, logical_date, "
            "outcome, code_version, message, created_at, sent_at, delivery_attempts, last_error, "
            "claimed_by, claimed_at) "
            "select idempotency_key, flow_name, logical_date, outcome, code_version, message, "
            "created_at, case when ? then ? else sent_at end, delivery_attempts + ?, "
            f"coalesce(?, last_error), null, null from {OUTBOX_LATEST} where idempotency_key = ?",
            [
                result.error is None,
                utc_now(),
                result.tries,
                result.error,
                result.idempotency_key,
            ],
        )


def _post_with_retries(url: str, key: str, payload: dict, tries: int, deadline: float) -> Delivery:
    error = "no time left for delivery in this run"
    used = 0
    for number in range(tries):
        if time.monotonic() >= deadline:
            break
        if number:
            time.sleep(WEBHOOK_BACKOFF_SECONDS[min(number - 1, len(WEBHOOK_BACKOFF_SECONDS) - 1)])
        used += 1
        timeout = max(min(WEBHOOK_TIMEOUT_SECONDS, deadline - time.monotonic()), 0.1)
        error = _post(url, key, payload, timeout)
        if error is None:
            return Delivery(key, None, used)
    return Delivery(key, redacted(error, [url]), used)


def _post(url: str, key: str, payload: dict, timeout: float) -> str | None:
    """POST the payload; None when the webhook answered 2xx within `timeout` seconds in all,
    else why not (the URL redacted: see `_post_with_retries`)."""
    try:
        request = urllib.request.Request(
            url,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Idempotency-Key": key},
            method="POST",
        )
    except ValueError as error:  # no scheme, or one urllib does not know
        return f"{WEBHOOK_ENV} is not a URL refill can post to ({error})"
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(
        _DeadlineHTTPHandler(deadline), _DeadlineHTTPSHandler(deadline)
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            if 200 <= response.status < 300:
                return None
            return f"HTTP {response.status}"
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        if time.monotonic() >= deadline:
            return f"no answer within {timeout:.1f}s (the deadline of one delivery)"
        return str(error) or type(error).__name__


class _Deadline:
    """An HTTP connection whose socket is shut down at `deadline` (time.monotonic()) if the
    answer's status line and headers have not all arrived by then: the blocked read ends
    at once, whatever pace the server keeps, and the answer counts as none (http.client
    takes the end of the stream for the end of the headers)."""

    def __init__(self, *args, deadline: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.deadline = deadline
        self.expired = threading.Event()
        self.watchdog: threading.Timer | None = None

    def connect(self) -> None:
        super().connect()
        self.watchdog = threading.Timer(
            max(self.deadline - time.monotonic(), 0.0), self._expire, (self.sock,)
        )
        self.watchdog.daemon = True
        self.watchdog.start()

    def _expire(self, connected: socket.socket) -> None:
        self.expired.set()
        with contextlib.suppress(OSError):
            connected.shutdown(socket.SHUT_RDWR)

    def getresponse(self):
        try:
            response = super().getresponse()
        finally:
            self._stop_watching()  # refill reads nothing of the answer past its headers
        if self.expired.is_set():
            response.close()
            raise TimeoutError("the answer did not arrive before the deadline")
        return response

    def close(self) -> None:
        self._stop_watching()
        super().close()

    def _stop_watching(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()


class _DeadlineHTTPConnection(_Deadline, http.client.HTTPConnection):
    pass


class _DeadlineHTTPSConnection(_Deadline, http.client.HTTPSConnection):
    pass


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: float):
        super().__init__()
        self.deadline = deadline

    def http_open(self, req):
        return self.do_open(functools.partial(_DeadlineHTTPConnection, deadline=self.deadline), req)


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: float):
        super().__init__()
        self.deadline = deadline

    def https_open(self, req):
        connection = functools.partial(_DeadlineHTTPSConnection, deadline=self.deadline)
        return self.do_open(connection, req, context=self._context)
