"""Seeded scenarios: a fresh landing and warehouse, a few days of payments, random events.

`plan_scenario(seed)` is a pure function of the seed (`random.Random(seed)`): the days,
what lands at first, and 3-6 events drawn from the harness's own model of the landing.
The plan never depends on how earlier events turned out, so a seed names the same
sequence of commands every time; only timing (where a SIGKILL lands, who wins the lock)
can differ between two runs of one seed.

Events:

| kind           | what happens                                                     | where      |
|----------------|------------------------------------------------------------------|------------|
| daily          | `refill daily --date D`                                          | in-process |
| backfill       | `refill backfill` over a sub-range, either order, chunks of 1-5  | in-process |
| rerun          | a day an earlier event built, built again (daily, or --restate)  | in-process |
| reexport       | a ready day re-exported: new amounts, fewer payments             | landing    |
| late_file      | a day that had not landed lands (parts first, manifest later)    | landing    |
| malformed      | a day re-exported with many malformed lines and conflicts        | landing    |
| hostile        | a day re-exported with hostile content (harness/hostile.py)      | landing    |
| fault          | a run failing at after_delete, in_audit or before_ledger, in any | in-process |
|                | model or in a later one of the chunk (fct_daily_revenue_v2)      |            |
| between_chunks | a backfill whose process fails after its first chunk             | in-process |
| kill           | the command in a child process, sent SIGKILL, SIGINT or SIGTERM  | subprocess |
|                | at a random moment                                               |            |
| resume         | after a kill: the same command again, which must converge        | in-process |
| concurrent     | a backfill in a child holds the lock; a daily run starts then    | both       |
| host_tz        | the command in a child whose host time zone is America/New_York  | subprocess |
| plain_dbt      | `dbt build --select fct_payments --vars <window>`, as a user would | in-process |
| retention      | a published day's landing deleted, then `dbt build --full-refresh` | both      |
| seed_change    | one fx rate of a scenario day corrected in the project's seed, the | project    |
|                | seed grown past dbt's 1 MiB checksum limit first                   |            |
| preview_interleaved | `backfill --restate --preview`, re-exports and daily runs,  | in-process |
|                | then `--from-preview ID` (sometimes with a re-export while it    |            |
|                | waits for the warehouse)                                         |            |
| preview_signal | SIGINT or SIGTERM to a preview or a publish of one during a      | child      |
|                | chunk that is not its last; then the same command again          |            |
| preview_kill   | SIGKILL to a preview during a chunk; then the next command       | child      |

At the end of two scenarios in five, a final backfill of every day (`--yes`, skipping
unready days) brings the warehouse up to date under one chunking; the same landing is
then built in a fresh warehouse under another chunking and order, and the two must agree
(chunking_invariance).
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from harness.hostile import FILE_NAMES, KINDS, MANIFEST_FIELDS, Hostile
from harness.overlay import fault_spec
from refill.sample_data import DaySpec

# (point, model): the point fails the first model that reaches it, or only the named
# model. A later model of the chunk (v2, built last) fails once the facts are built: at
# its audit, or before its ledger rows (written by its own post-hook on main; under
# write-audit-publish only the separate_commits variant's publish names the model there).
LATER_MODEL = "fct_daily_revenue_v2"
FAULT_POINTS = (
    ("after_delete", None),
    ("in_audit", None),
    ("before_ledger", None),
    ("before_commit", None),
    ("in_audit", LATER_MODEL),
    ("before_ledger", LATER_MODEL),
)
KILL_SIGNALS = ("SIGKILL", "SIGKILL", "SIGINT", "SIGTERM")
HOST_TIME_ZONES = ("America/New_York", "Asia/Kolkata", "Pacific/Kiritimati")
CHUNK_SIZES = (1, 1, 2, 3, 5)
FIRST_DAY = date(2025, 1, 6)  # fx rates cover 2024-2027; far from any run's clock date
KILL_MOMENTS = ("delay", "in_chunk", "in_chunk", "between_chunks")

# How often each kind is drawn. Subprocess events cost a Python start and a dbt parse
# each, so they are rarer; the CI budget of ~30 scenarios still sees about ten kills.
WEIGHTS = {
    "daily": 11,
    "backfill": 13,
    "rerun": 9,
    "reexport": 7,
    "late_file": 6,
    "malformed": 5,
    "hostile": 10,
    "fault": 12,
    "between_chunks": 5,
    "kill": 7,
    "concurrent": 2,
    "host_tz": 2,
    "plain_dbt": 5,
    "retention": 3,
    "seed_change": 4,
}
# seed_change: the currencies whose rate may be corrected, and by how much
CORRECTED_CURRENCIES = ("EUR", "GBP", "JPY", "CAD")
RATE_FACTORS = ("1.05", "0.9", "1.2")
# `python -m harness.run --classes NAME`: scenarios drawn from these kinds only (each with
# the daily runs, backfills and re-exports they interleave with). The preview kinds draw
# several events each, so they have a budget of their own rather than a share of the
# default one (tests/harness/test_harness.py runs both).
CLASSES = {
    "preview": {
        "preview_interleaved": 5,
        "preview_signal": 3,
        "preview_kill": 3,
        "daily": 2,
        "backfill": 2,
        "reexport": 2,
    },
}
# Where a publish from a preview names the preview: the driver puts the id of the newest
# preview the scenario recorded (the plan cannot know it).
PREVIEW_PLACEHOLDER = "{preview}"
LANDING_KINDS = ("reexport", "late_file", "malformed", "hostile", "retention", "seed_change")
RUN_SETTINGS = ["--retry-delay", "0", "--lock-wait", "60"]
# The share of scenarios that end with a final backfill and a fresh build under another
# chunking (chunking_invariance): two more runs and a seed load each, so not every one.
CHUNKING_SHARE = 0.4
# What a user would select in a plain dbt build of one mart (issue 11, finding 3).
PLAIN_SELECTIONS = ("fct_payments", "fct_payments", "+fct_payments", "fct_daily_revenue_v2")
# A full refresh as the flows run a build (unit tests excluded: they are CI's).
FULL_REFRESH = ("build", "--full-refresh", "--exclude-resource-type", "unit_test")


@dataclass(frozen=True)
class Landing:
    """The harness writes (or re-writes) one day's export."""

    day: date
    spec: DaySpec | None  # None: the day's folder is deleted (landing retention)
    note: str
    hostile: Hostile | None = None


@dataclass(frozen=True)
class SeedChange:
    """The harness corrects one fx rate in the project's seed (grown past 1 MiB first)."""

    day: date
    currency: str
    factor: str  # the new rate is the old one times this (a decimal, as text)

    def describe(self) -> str:
        return f"fx rate {self.day} {self.currency} x{self.factor} (seed over 1 MiB)"


@dataclass
class Event:
    kind: str
    argv: list[str] = field(default_factory=list)  # the refill command, for run events
    landing: Landing | None = None  # for landing events
    fault: str | None = None  # REFILL_HARNESS_FAULT for the run (harness/overlay.py)
    fault_persists: bool = False  # every attempt fails (vs. only the first)
    kill_moment: str | None = None  # delay | in_chunk | between_chunks
    kill_delay: float = 0.0
    kill_signal: str = "SIGKILL"  # SIGKILL | SIGINT | SIGTERM
    time_zone: str | None = None  # host_tz: the child's TZ
    dbt_argv: list[str] = field(default_factory=list)  # plain_dbt, retention: a dbt command
    before: list[Landing] = field(default_factory=list)  # landed first (retention's clean days)
    second_argv: list[str] = field(default_factory=list)  # concurrent: the in-process run
    days: list[date] = field(default_factory=list)  # the days the command covers
    seed: SeedChange | None = None  # seed_change: the rate corrected
    # a publish from a preview: this day is re-exported once the run asks for the warehouse
    landing_while_waiting: Landing | None = None
    # a signal in a chunk that is not the run's last must stop it: exit 0 is a violation
    # (preview_signal: one-day chunks, oldest first, every day ready)
    stops_between_chunks: bool = False

    def describe(self) -> str:
        if self.seed is not None:
            return f"{self.kind}: {self.seed.describe()}"
        if self.landing is not None and not self.dbt_argv and not self.argv:
            return f"{self.kind}: {self.landing.note}"
        if self.dbt_argv:
            text = f"{self.kind}: dbt {' '.join(self.dbt_argv)}"
            if self.landing is not None:
                text = f"{self.kind}: {self.landing.note}, then dbt {' '.join(self.dbt_argv)}"
            if self.before:
                text += f" [first: {'; '.join(landing.note for landing in self.before)}]"
            return text
        text = f"{self.kind}: refill {' '.join(self.argv)}"
        if self.landing is not None:
            text = f"{self.kind}: {self.landing.note}, then refill {' '.join(self.argv)}"
        if self.time_zone:
            text += f" [TZ={self.time_zone}]"
        if self.fault:
            text += f" [REFILL_HARNESS_FAULT={self.fault}]"
        if self.kind == "between_chunks":
            text += " [fails after its first chunk]"
        if self.kill_moment:
            text += f" [{self.kill_signal} {self.kill_moment}" + (
                f" +{self.kill_delay:.2f}s]" if self.kill_delay else "]"
            )
        if self.second_argv:
            text += f" || in-process: refill {' '.join(self.second_argv)}"
        if self.landing_while_waiting is not None:
            text += f" [while it waits: {self.landing_while_waiting.note}]"
        return text


@dataclass
class Scenario:
    seed: int
    days: list[date]
    initial: list[Landing]
    events: list[Event]
    final: list[str] = field(default_factory=list)  # the final backfill, in the warehouse
    fresh: list[str] = field(default_factory=list)  # the same range, in a fresh warehouse

    def describe(self) -> list[str]:
        lines = [f"scenario {self.seed}: {self.days[0]}..{self.days[-1]}"]
        lines += [f"  land {landing.note}" for landing in self.initial]
        lines += [f"  {n}. {event.describe()}" for n, event in enumerate(self.events, 1)]
        if self.final:
            lines.append(f"  final: refill {' '.join(self.final)}")
            lines.append(f"  fresh warehouse: refill {' '.join(self.fresh)}")
        return lines


@dataclass
class _DayModel:
    """What the harness has written for a day (its own model; the warehouse is not asked)."""

    spec: DaySpec | None = None  # None: nothing landed
    ready: bool = False
    suspect: bool = False  # a hostile manifest or file name: refill may refuse the day


def plan_scenario(seed: int, weights: dict[str, int] | None = None) -> Scenario:
    """The scenario of a seed: days, initial landing and events. Pure: same seed, same plan."""
    rng = random.Random(seed)
    weights = weights or WEIGHTS
    first = FIRST_DAY + timedelta(days=rng.randrange(0, 480))
    days = [first + timedelta(days=n) for n in range(rng.randint(3, 5))]
    model = {day: _DayModel() for day in days}
    built: list[date] = []
    hostile_days: list[date] = []

    def new_spec(version: int = 1, **changes) -> DaySpec:
        spec = DaySpec(
            payments=rng.randint(20, 45),
            replay_rate=0.05,
            malformed_rate=0.05,
            conflict_rate=0.03,
            parts=rng.randint(1, 3),
            export_version=version,
        )
        for name, value in changes.items():
            setattr(spec, name, value)
        return spec

    def land(day: date, spec: DaySpec, note: str) -> Landing:
        model[day].spec = spec
        model[day].ready = spec.write_manifest
        model[day].suspect = False
        return Landing(day, spec, f"{day} {note}")

    initial = []
    for day in days:
        roll = rng.random()
        if roll < 0.75:
            initial.append(land(day, new_spec(), "lands"))
        elif roll < 0.88:
            initial.append(land(day, new_spec(write_manifest=False), "parts land, no manifest"))
        # else: nothing yet, a late file

    def ready_days() -> list[date]:
        return [day for day in days if model[day].ready]

    def sub_range() -> list[date]:
        start = rng.randrange(len(days))
        end = rng.randrange(start, len(days))
        return days[start : end + 1]

    def daily(day: date, retries: int = 1, yes: bool | None = None) -> Event:
        argv = ["daily", "--date", str(day), "--wait", "0", "--retries", str(retries)]
        # A manual daily of a published day restates it: sign-off, as a backfill's.
        if yes if yes is not None else day in built and rng.random() < 0.7:
            argv.append("--yes")
        return Event("daily", argv + RUN_SETTINGS, days=[day])

    def backfill(
        window: list[date],
        *,
        chunk: int | None = None,
        order: str | None = None,
        yes: bool | None = None,
        restate: bool | None = None,
        skip: bool | None = None,
        retries: int = 1,
    ) -> Event:
        argv = ["backfill", "--start", str(window[0]), "--end", str(window[-1])]
        argv += ["--order", order or rng.choice(("newest-first", "oldest-first"))]
        argv += ["--chunk-days", str(chunk or rng.choice(CHUNK_SIZES))]
        if yes if yes is not None else rng.random() < 0.85:
            argv.append("--yes")
        if restate if restate is not None else rng.random() < 0.25:
            argv.append("--restate")
        if skip if skip is not None else rng.random() < 0.4:
            argv += ["--on-missing", "skip"]
        argv += ["--retries", str(retries), *RUN_SETTINGS]
        return Event("backfill", argv, days=list(window))

    def a_ready_day(prefer_built: bool = False) -> date | None:
        ready = ready_days()
        candidates = [day for day in built if day in ready] if prefer_built else []
        if candidates and rng.random() < 0.75:
            return rng.choice(candidates)
        return rng.choice(ready) if ready else None

    def ready_run(least: int) -> list[date]:
        """A window of consecutive ready days (not suspect), at least `least` long."""
        runs, run = [], []
        for day in days:
            if model[day].ready and not model[day].suspect:
                run.append(day)
            else:
                runs, run = runs + [run], []
        runs = [run for run in runs + [run] if len(run) >= least]
        if not runs:
            return []
        run = rng.choice(runs)
        start = rng.randrange(len(run) - least + 1)
        return run[start : rng.randrange(start + least - 1, len(run)) + 1]

    def preview(window: list[date], chunk: int | None = None, order: str | None = None) -> Event:
        argv = ["backfill", "--start", str(window[0]), "--end", str(window[-1])]
        argv += ["--order", order or rng.choice(("newest-first", "oldest-first"))]
        argv += ["--chunk-days", str(chunk or rng.choice(CHUNK_SIZES))]
        argv += ["--restate", "--preview", "--retries", "1", *RUN_SETTINGS]
        return Event("preview", argv, days=list(window))

    def publish(made: Event) -> Event:
        argv = list(made.argv)
        argv[argv.index("--preview") : argv.index("--preview") + 1] = [
            "--yes",
            "--from-preview",
            PREVIEW_PLACEHOLDER,
        ]
        return Event("from_preview", argv, days=list(made.days))

    def reexported(day: date, note: str = "re-exported") -> Landing:
        old = model[day].spec
        spec = new_spec(old.export_version + 1, payments=old.payments, amount_factor=1.1)
        return land(day, spec, f"{note} (v{spec.export_version})")

    def draw(kind: str) -> list[Event]:
        if kind == "daily":
            day = a_ready_day() if rng.random() < 0.8 else rng.choice(days)
            return [daily(day or rng.choice(days))]
        if kind == "backfill":
            return [backfill(sub_range())]
        if kind == "rerun":
            if not built:
                return []
            day = rng.choice(built)
            if rng.random() < 0.5:
                return [_as(daily(day, yes=True), "rerun")]
            window = [d for d in days if day <= d <= day + timedelta(days=rng.randint(0, 2))]
            return [_as(backfill(window, yes=True, restate=True), "rerun")]
        if kind == "reexport":
            day = a_ready_day(prefer_built=True)
            if day is None:
                return []
            old = model[day].spec
            spec = new_spec(
                old.export_version + 1,
                payments=old.payments,
                parts=rng.randint(1, 3),
                amount_factor=rng.choice((1.0, 1.1, 0.93)),
                keep_fraction=rng.choice((1.0, 1.0, 0.8)),
            )
            return [
                Event("reexport", landing=land(day, spec, f"re-exported (v{spec.export_version})"))
            ]
        if kind == "late_file":
            waiting = [day for day in days if not model[day].ready]
            if not waiting:
                return []
            day = rng.choice(waiting)
            if model[day].spec is not None:
                spec = dataclasses.replace(model[day].spec, write_manifest=True)
                return [Event("late_file", landing=land(day, spec, "manifest lands late"))]
            if rng.random() < 0.4:
                landing = land(day, new_spec(write_manifest=False), "parts land late, no manifest")
            else:
                landing = land(day, new_spec(), "lands late")
            return [Event("late_file", landing=landing)]
        if kind == "malformed":
            landed = [day for day in days if model[day].spec is not None]
            if not landed:
                return []
            day = rng.choice(landed)
            old = model[day].spec
            spec = new_spec(
                old.export_version + 1,
                malformed_rate=0.3,
                conflict_rate=0.1,
                replay_rate=0.15,
            )
            note = f"re-exported with malformed lines and conflicts (v{spec.export_version})"
            return [Event("malformed", landing=land(day, spec, note))]
        if kind == "hostile":
            day = a_ready_day(prefer_built=True) or rng.choice(days)
            # The kinds in turn from the seed, so a few dozen scenarios meet every one.
            kind = KINDS[(seed + len(hostile_days)) % len(KINDS)]
            hostile_days.append(day)
            hostile = Hostile(kind, rng.randrange(len(MANIFEST_FIELDS) * len(FILE_NAMES)))
            old = model[day].spec
            spec = new_spec((old.export_version + 1) if old else 1)
            landing = land(day, spec, f"re-exported with {hostile.describe()}")
            landing = dataclasses.replace(landing, hostile=hostile)
            model[day].suspect = hostile.kind in ("manifest_field", "file_name", "special_file")
            if hostile.kind == "special_file":  # built at once: what a link reads shows only then
                event = daily(day, yes=True)
                event.kind, event.landing = "hostile", landing
                return [event]
            return [Event("hostile", landing=landing)]
        if kind == "host_tz":
            # A day whose times carry no zone (UTC by contract), built on another host zone.
            day = a_ready_day(prefer_built=True) or rng.choice(days)
            old = model[day].spec
            spec = new_spec((old.export_version + 1) if old else 1)
            hostile = Hostile("zone_free_times")
            landing = land(day, spec, f"re-exported with {hostile.describe()}")
            if rng.random() < 0.5:
                event = daily(day, yes=True)
            else:
                window = [d for d in days if day - timedelta(days=1) <= d <= day]
                event = backfill(window, yes=True, skip=True)
            event.kind = "host_tz"
            event.landing = dataclasses.replace(landing, hostile=hostile)
            event.time_zone = rng.choice(HOST_TIME_ZONES)
            return [event]
        if kind == "plain_dbt":
            window = sub_range()
            variables = json.dumps({"start_date": str(window[0]), "end_date": str(window[-1])})
            dbt_argv = ["build", "--select", rng.choice(PLAIN_SELECTIONS), "--vars", variables]
            return [Event("plain_dbt", dbt_argv=dbt_argv, days=list(window))]
        if kind == "retention":
            published = [day for day in built if model[day].ready]
            if not published:
                return []
            day = rng.choice(published)
            # Every other landed day clean and ready first: a full refresh that stops on
            # an unready day would never reach the retention question.
            clean = [
                land(other, new_spec(model[other].spec.export_version + 1), "re-exported clean")
                for other in days
                if other != day
                and model[other].spec is not None
                and (not model[other].ready or model[other].suspect)
            ]
            model[day].spec, model[day].ready = None, False
            landing = Landing(day, None, f"{day}'s landing deleted (retention)")
            event = Event("retention", landing=landing, dbt_argv=list(FULL_REFRESH), days=[day])
            event.before = clean
            return [event]
        if kind == "seed_change":
            change = SeedChange(
                rng.choice(days), rng.choice(CORRECTED_CURRENCIES), rng.choice(RATE_FACTORS)
            )
            return [Event("seed_change", seed=change, days=[change.day])]
        if kind == "fault":
            point, fault_model = rng.choice(FAULT_POINTS)
            persists = rng.random() < 0.6
            retries = 1 if persists else 2
            if rng.random() < 0.5:
                day = a_ready_day(prefer_built=True) or rng.choice(days)
                event = daily(day, retries, yes=True)
            else:
                start = a_ready_day(prefer_built=True) or days[0]
                window = [
                    d for d in days if start <= d <= start + timedelta(days=rng.randint(0, 2))
                ]
                event = backfill(window, yes=True, restate=rng.random() < 0.6, retries=retries)
            event.kind = "fault"
            attempts = None if persists else 1
            event.fault = fault_spec(point, attempts=attempts, model=fault_model)
            event.fault_persists = persists
            return [event]
        if kind == "between_chunks":
            if len(days) < 2:
                return []
            start = rng.randrange(len(days) - 1)
            window = days[start : start + rng.randint(2, 3)]
            event = backfill(window, chunk=1, yes=True, restate=rng.random() < 0.5)
            return [_as(event, "between_chunks")]
        if kind == "kill":
            if rng.random() < 0.3:
                event = daily(a_ready_day() or days[0], yes=True)
            else:
                event = backfill(sub_range(), chunk=rng.choice((1, 1, 2)), yes=True, skip=True)
            event.kind = "kill"
            event.kill_moment = rng.choice(KILL_MOMENTS)
            event.kill_signal = rng.choice(KILL_SIGNALS)
            if event.kill_moment == "delay":
                event.kill_delay = round(rng.uniform(0.1, 4.0), 2)
            elif event.kill_moment == "in_chunk":
                event.kill_delay = round(rng.uniform(0.0, 1.2), 2)
            resume = Event("resume", list(event.argv), days=list(event.days))
            return [event, resume]
        if kind == "preview_interleaved":
            window = ready_run(1)
            if not window:
                return []
            made, between = preview(window), []
            for _ in range(rng.randint(0, 2)):
                day = rng.choice(window) if rng.random() < 0.7 else rng.choice(days)
                if rng.random() < 0.5 and model[day].ready:
                    between.append(Event("reexport", landing=reexported(day)))
                else:
                    between.append(daily(day, yes=True))
            published = publish(made)
            if rng.random() < 0.35:
                published.landing_while_waiting = reexported(
                    rng.choice(window), "re-exported while the publish waits for the warehouse"
                )
            return [made, *between, published]
        if kind in ("preview_signal", "preview_kill"):
            window = ready_run(2)
            if not window:
                return []
            made = preview(window, chunk=1, order="oldest-first")
            signalled = made
            if kind == "preview_signal" and rng.random() < 0.5:
                signalled = publish(made)  # the publish is signalled, the preview made first
            signalled.kind = kind
            signalled.kill_moment = "in_chunk"
            signalled.kill_delay = round(rng.uniform(0.0, 0.5), 2)
            if kind == "preview_kill":
                # once a chunk is kept: what the killed preview leaves behind
                signalled.kill_moment = "in_later_chunk"
                signalled.kill_signal = "SIGKILL"
                # the next command of the warehouse must drop what the killed preview kept
                return [signalled, daily(a_ready_day() or window[0], yes=True)]
            signalled.kill_signal = rng.choice(("SIGINT", "SIGTERM"))
            signalled.stops_between_chunks = True
            again = Event(
                "resume" if signalled is not made else "preview",
                list(signalled.argv),
                days=list(window),
            )
            return [made, signalled, again] if signalled is not made else [signalled, again]
        if kind == "concurrent":
            start = rng.randrange(len(days) - 1)
            window = days[start : start + rng.randint(2, 3)]
            holder = backfill(window, chunk=1, yes=True, restate=True, skip=True)
            holder.kind = "concurrent"
            second = daily(a_ready_day() or days[-1], yes=True)
            lock_wait = rng.choice(("0.5", "60"))
            holder.second_argv = [*second.argv[:-2], "--lock-wait", lock_wait]
            holder.days = sorted(set(window) | set(second.days))
            return [holder]
        raise ValueError(kind)

    kinds = list(weights)
    events: list[Event] = []
    for _ in range(rng.randint(3, 6)):
        drawn: list[Event] = []
        while not drawn:
            kind = rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
            drawn = draw(kind)
        for event in drawn:
            if (event.argv or event.kind == "plain_dbt") and event.kind != "resume":
                built.extend(day for day in event.days if model[day].ready and day not in built)
        events += drawn
    if rng.random() >= CHUNKING_SHARE:
        return Scenario(seed, days, initial, events)
    final = backfill(days, yes=True, restate=False, skip=True).argv
    fresh = backfill(days, yes=True, restate=False, skip=True).argv
    if rng.random() < 0.3:
        fresh[fresh.index("--chunk-days") : fresh.index("--chunk-days")] = [
            "--chunk-lines",
            str(rng.choice((40, 90))),
        ]
    return Scenario(seed, days, initial, events, final, fresh)


def _as(event: Event, kind: str) -> Event:
    event.kind = kind
    return event
