"""Deterministic landing data and fx seed, per the landing contract (docs/reference/landing.md).

Every day's content depends only on (seed, day, options), so generating one day
or a year gives the same bytes for that day: tests can build a window from a
subset and compare it with the whole. `_SUCCESS` is written last, as a real
exporter would, so a reader that sees it sees finished part files.
"""

from __future__ import annotations

import csv
import json
import random
import shutil
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from refill.rules.readiness import MANIFEST_NAME, day_folder

# The landing folder this generator writes: the payments sample (the dbt project names the
# datasets it builds; this is the one the sample is for).
DATASET = "payments"

MARKET_CURRENCY = {"US": "USD", "DE": "EUR", "FR": "EUR", "GB": "GBP", "JP": "JPY", "CA": "CAD"}
CURRENCIES = ("USD", "EUR", "GBP", "JPY", "CAD")
STATUSES = ("captured", "captured", "captured", "captured", "refunded", "failed")
# Rough USD value of one unit; the seed walks around these.
_FX_CENTRE = {"USD": 1.0, "EUR": 1.09, "GBP": 1.27, "JPY": 0.0068, "CAD": 0.74}
FX_FIRST_DAY = date(2024, 1, 1)
FX_LAST_DAY = date(2027, 12, 31)
MALFORMED_KINDS = (
    "not json",
    "missing field",
    "wrong type",
    "unknown currency",
    "unknown market",
    "unknown status",
    "bad timestamp",
    "event on another day",
)


@dataclass
class DaySpec:
    """How one day is exported. Defaults give a clean, ready day."""

    payments: int = 200
    replay_rate: float = 0.02
    malformed_rate: float = 0.01
    conflict_rate: float = 0.005
    parts: int = 2
    outage_hours: tuple[int, int] | None = None  # [start, end) hours with no events
    amount_factor: float = 1.0  # a re-export with corrected (changed) amounts
    keep_fraction: float = 1.0  # a re-export with fewer payments
    export_version: int = 1  # bumps exported_at on a re-export
    write_manifest: bool = True
    manifest_overrides: dict = field(default_factory=dict)  # e.g. {"records": 7} to disagree


def write_day(root: Path, day: date, spec: DaySpec | None = None, seed: int = 7) -> dict:
    """Write (or re-export) one day's part files and, last, its manifest. Returns the manifest."""
    spec = spec or DaySpec()
    folder = day_folder(root, DATASET, day)
    if folder.exists():
        shutil.rmtree(folder)  # a re-export replaces the day's files
    folder.mkdir(parents=True)

    lines = _day_lines(day, spec, random.Random(f"{seed}:{day.isoformat()}"))
    parts = max(spec.parts, 1) if lines else 0
    for index in range(parts):
        chunk = lines[index::parts]
        (folder / f"part-{index:04d}.jsonl").write_text("".join(f"{line}\n" for line in chunk))

    exported_at = datetime.combine(day + timedelta(days=1), datetime.min.time()) + timedelta(
        hours=2, minutes=13, seconds=spec.export_version - 1
    )
    manifest = {
        "dt": day.isoformat(),
        "files": parts,
        "records": len(lines),
        "exported_at": exported_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        **spec.manifest_overrides,
    }
    if spec.write_manifest:
        (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    return manifest


def write_days(root: Path, start: date, days: int, spec: DaySpec | None = None, seed: int = 7):
    """Write `days` consecutive days from `start` with the same spec."""
    for offset in range(days):
        write_day(root, start + timedelta(days=offset), spec, seed)


def _day_lines(day: date, spec: DaySpec, rng: random.Random) -> list[str]:
    markets = list(MARKET_CURRENCY)
    records: list[str] = []
    for number in range(spec.payments):
        market = rng.choice(markets)
        currency = MARKET_CURRENCY[market] if rng.random() < 0.85 else "USD"
        second = rng.randrange(86_400)
        amount = round(rng.uniform(1, 500), 2)
        status = rng.choice(STATUSES)
        if spec.outage_hours and spec.outage_hours[0] <= second // 3600 < spec.outage_hours[1]:
            continue
        if rng.random() >= spec.keep_fraction:
            continue
        payment = {
            "transaction_id": f"tx-{day:%Y%m%d}-{number:06d}",
            "event_ts": _timestamp(day, second),
            "amount": _amount(amount * spec.amount_factor, currency),
            "currency": currency,
            "market": market,
            "status": status,
        }
        records.append(json.dumps(payment))
        if rng.random() < spec.replay_rate:
            records.append(json.dumps(payment))  # at-least-once delivery: an identical replay
        if rng.random() < spec.conflict_rate:
            conflicting = {**payment, "amount": _amount(amount + 1, currency)}
            records.append(json.dumps(conflicting))
        if rng.random() < spec.malformed_rate:
            records.append(_malformed(payment, rng.choice(MALFORMED_KINDS), day))
    rng.shuffle(records)
    return records


def _malformed(payment: dict, kind: str, day: date) -> str:
    broken = dict(payment, transaction_id=payment["transaction_id"] + "-bad")
    if kind == "not json":
        return json.dumps(broken)[:-7]  # a line cut short
    if kind == "missing field":
        broken.pop("market")
    elif kind == "wrong type":
        broken["amount"] = "twelve"
    elif kind == "unknown currency":
        broken["currency"] = "XXX"
    elif kind == "unknown market":
        broken["market"] = "ZZ"
    elif kind == "unknown status":
        broken["status"] = "pending"
    elif kind == "bad timestamp":
        broken["event_ts"] = "yesterday"
    elif kind == "event on another day":
        broken["event_ts"] = _timestamp(day - timedelta(days=1), 43_200)
    return json.dumps(broken)


def _timestamp(day: date, second: int) -> str:
    moment = datetime.combine(day, datetime.min.time()) + timedelta(seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _amount(value: float, currency: str) -> float | int:
    return int(round(value)) if currency == "JPY" else round(value, 2)


# -- Hostile and odd inputs, for tests and the harness. Small writers: each produces one
# kind of landing that refill must refuse by name or quarantine line by line. The default
# generator above never calls them, so its output stays the same.

# Transaction ids that are data, never SQL: quotes, a statement separator, backslashes,
# JSON escapes and characters outside ASCII.
ODD_TRANSACTION_IDS = (
    "tx-'quoted'",
    'tx-"double"',
    "tx-'; drop table main.fct_payments; --",
    "tx-back\\slash\\",
    "tx-\\x00-not-a-nul",
    "tx-line\nbreak",
    "tx-tab\there",
    "tx-ünïcødé-€-日本",
    "tx-emoji-\U0001f4b8",
    "tx-rtl-\u202e-gnp.exe",
    "tx-%s-{}-$1-?",
)

# A manifest value that closes the SQL text it was once pasted into and appends a statement.
INJECTED_SQL = "'); drop table main.fct_payments; --"


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT = _Omit()  # a manifest field left out by write_landed_day


def payment_line(day: date, number: int, **changes) -> str:
    """One valid payment line of `day` (JSON), with any field changed or removed (None)."""
    record = {
        "transaction_id": f"tx-{day:%Y%m%d}-{number:06d}",
        "event_ts": _timestamp(day, (number * 3_607) % 86_400),
        "amount": 10 + number,
        "currency": "EUR",
        "market": "DE",
        "status": "captured",
    }
    record.update(changes)
    return json.dumps({key: value for key, value in record.items() if value is not None})


def not_utf8_line(day: date, number: int) -> bytes:
    """A payment line whose bytes are not valid UTF-8 (a Latin-1 byte and a cut sequence)."""
    line = payment_line(day, number, market="DE").encode()
    return line.replace(b'"DE"', b'"D\xe9\xc3"')


def write_landed_day(
    root: Path,
    day: date,
    parts: list[list[str | bytes]],
    manifest: dict | str | bytes | None = None,
    part_names: list[str] | None = None,
    dataset: str = DATASET,
) -> dict | str | bytes:
    """Write a day of `dataset` from explicit lines (text or raw bytes) and, last, its manifest.

    `manifest` None writes one that agrees with the files; a dict is merged over that
    agreeing manifest (a value of `OMIT` removes the field); a str or bytes is written
    as it is. `part_names` replaces the usual part-NNNN.jsonl names. Returns what was
    written as the manifest.
    """
    folder = day_folder(root, dataset, day)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    names = part_names or [f"part-{index:04d}.jsonl" for index in range(len(parts))]
    for name, lines in zip(names, parts, strict=True):
        encoded = [line.encode() if isinstance(line, str) else line for line in lines]
        (folder / name).write_bytes(b"".join(line + b"\n" for line in encoded))
    agreeing = {
        "dt": day.isoformat(),
        "files": len(parts),
        "records": sum(len(lines) for lines in parts),
        "exported_at": f"{day + timedelta(days=1)}T02:13:00Z",
    }
    if manifest is None or isinstance(manifest, dict):
        merged = {**agreeing, **(manifest or {})}
        manifest = {key: value for key, value in merged.items() if value is not OMIT}
        (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    else:
        raw = manifest.encode() if isinstance(manifest, str) else manifest
        (folder / MANIFEST_NAME).write_bytes(raw)
    return manifest


def fx_rate_rows() -> list[tuple[str, str, str]]:
    """Daily USD value of one unit of each currency, 2024-01-01 to 2027-12-31 (a seeded walk)."""
    rng = random.Random("fx")
    level = dict(_FX_CENTRE)
    rows = []
    day = FX_FIRST_DAY
    while day <= FX_LAST_DAY:
        for currency in CURRENCIES:
            if currency != "USD":
                drift = (_FX_CENTRE[currency] - level[currency]) * 0.05
                level[currency] *= 1 + drift / _FX_CENTRE[currency] + rng.gauss(0, 0.004)
            rows.append((day.isoformat(), currency, f"{level[currency]:.6f}"))
        day += timedelta(days=1)
    return rows


def write_fx_seed(path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["rate_date", "currency", "usd_per_unit"])
        writer.writerows(fx_rate_rows())
