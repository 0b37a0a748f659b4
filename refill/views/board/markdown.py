"""The board as markdown: the table the Prefect UI shows beside a run (flows/artifacts.py
publishes it; this module knows nothing of Prefect)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from refill.rules import planning
from refill.views.board import read, rows
from refill.views.board.model import (
    ACTIVE,
    FAILED,
    OFF,
    ON,
    STALE,
    WAITING,
    Board,
    Extras,
    days_label,
    money,
    number,
)
from refill.warehouse import ops
from refill.warehouse.partition_status import DayStatus

LAMP_EMOJI = {ON: "🟢", OFF: "⚪", FAILED: "❌", WAITING: "⏳", ACTIVE: "🔵", STALE: "🟠"}
LEGEND = (
    (ON, "done"),
    (OFF, "not started"),
    (FAILED, "failed"),
    (WAITING, "waiting"),
    (ACTIVE, "building now"),
    (STALE, "stale"),
)
# A daily run's artifact shows its logical date and the days before it, a week in all.
ARTIFACT_DAYS = 7
# The artifact waits at most this for a build of another run (it is taken between chunks).
ARTIFACT_LOCK_WAIT_SECONDS = 30.0


def week_ending(day: date, days: int = ARTIFACT_DAYS) -> planning.DateRange:
    """The days a daily run's artifact shows: its logical date and the six before it."""
    return planning.DateRange(day - timedelta(days=days - 1), day)


def artifact_markdown(
    project,
    window: planning.DateRange,
    statuses: list[DayStatus] | None = None,
    lock_wait_seconds: float = ARTIFACT_LOCK_WAIT_SECONDS,
) -> str:
    """The board of `window` as the artifact shows it, read now (from `statuses`, when the
    caller holds the days' statuses already)."""
    board = read.snapshot(project, window, lock_wait_seconds=lock_wait_seconds, statuses=statuses)
    return board_markdown(board)


def summary_markdown(
    statuses: list[DayStatus],
    extras: Extras | None = None,
    *,
    window: planning.DateRange | None = None,
    now: datetime | None = None,
    current_code_versions: dict[str, str] | None = None,
) -> str:
    """The board of what was read as a markdown table (`now`: the time it is drawn at)."""
    board = rows.assemble(
        statuses,
        extras,
        window=window,
        now=now or ops.utc_now(),
        current_code_versions=current_code_versions,
    )
    return board_markdown(board)


def board_markdown(board: Board) -> str:
    lines = [f"## refill board {board.window}", ""]
    lines += [f"- data as of: {line}" for line in board.data_as_of]
    for run in board.active_runs:
        chunks = [days_label(b) for b in board.builders if b.run_id == run.run_id and b.partitions]
        building = f" · building {', '.join(chunks)}" if chunks else ""
        lines.append(f"- running now: {run.describe()}{building}")
    lines += [f"- {mart.describe()}" for mart in board.marts]
    legend = ", ".join(f"{LAMP_EMOJI[state]} {name}" for state, name in LEGEND)
    lines += ["", f"lamps: {legend}", ""]
    header = ["day", "ready", "building", "audited", "published", "state", "rows / source"]
    header += ["quarantined", "duplicates", "code", "run"]
    for mart in board.marts:
        header += [f"{mart.name} v{v}" for v in mart.versions]
    header.append("flags")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for row in board.rows:
        cells = [str(row.day)]
        cells += [LAMP_EMOJI[lamp.state] for lamp in row.lamps]
        cells += [row.state, row.rows_vs_source, number(row.quarantined)]
        cells += [number(row.duplicates), row.code_version or "-"]
        cells.append(f"{row.run_label} {row.run_id[:8]}" if row.run_id else "-")
        for mart, totals in row.revenue:
            for version, total in totals.items():
                text = money(total)
                cells.append(f"**{text}** (served)" if version == mart.served else text)
        cells.append(", ".join(row.flag_names()) or "-")
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    problems = [
        (row.day, flag) for row in board.rows for flag in row.flags if flag.name != "backfill"
    ]
    if problems:
        lines += ["", "### why"]
        lines += [f"- {day} **{flag.name}**: {flag.note}" for day, flag in problems]
    lines += ["", f"_generated {board.generated_at:%Y-%m-%d %H:%M:%S} UTC by `refill board`_"]
    return "\n".join(lines) + "\n"
