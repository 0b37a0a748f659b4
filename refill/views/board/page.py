"""The board as one self-contained HTML page: style and script inline (read from this
package's board.css and board.js, the page from page.html), lamps and strips inline SVG,
nothing fetched when it is opened from disk. Served (`server`), the page polls its server
and reloads when the board's fingerprint changes."""

from __future__ import annotations

import functools
import hashlib
import html
import string
from dataclasses import replace
from datetime import datetime
from importlib import resources
from pathlib import Path

from refill.views.board.model import (
    ACTIVE,
    FAILED,
    OFF,
    ON,
    STALE,
    WAITING,
    Board,
    BoardRow,
    Lamp,
    days_label,
    money,
    number,
)


@functools.cache
def _package_text(name: str) -> str:
    """A file shipped beside this module (package data: a non-editable install has it)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


_LAMP_SVG = {
    ON: '<circle cx="9" cy="9" r="7" class="fill"/>',
    OFF: '<circle cx="9" cy="9" r="6.2" class="ring"/>',
    FAILED: '<circle cx="9" cy="9" r="7" class="fill"/>'
    '<path d="M6 6 L12 12 M12 6 L6 12" class="mark"/>',
    WAITING: '<circle cx="9" cy="9" r="6.2" class="ring"/>'
    '<path d="M9 4.8 V9 L12 10.6" class="hand"/>',
    ACTIVE: '<circle cx="9" cy="9" r="7" class="fill"/><circle cx="9" cy="9" r="3" class="core"/>',
    STALE: '<circle cx="9" cy="9" r="7" class="fill"/>'
    '<path d="M9 5 V10 M9 12.2 V12.8" class="mark"/>',
}


def _lamp_html(lamp: Lamp) -> str:
    clock = f'<span class="at">{lamp.at:%H:%M}</span>' if lamp.state == WAITING and lamp.at else ""
    return (
        f'<span class="lamp lamp-{lamp.state}" data-step="{lamp.step}" data-state="{lamp.state}" '
        f'title="{_e(lamp.step + ": " + lamp.note)}">'
        f'<svg viewBox="0 0 18 18" width="18" height="18" role="img" aria-label="'
        f'{_e(lamp.step + " " + lamp.state)}">{_LAMP_SVG[lamp.state]}</svg>{clock}</span>'
    )


def _strip_html(row: BoardRow) -> str:
    if not row.hourly:
        return '<span class="muted">-</span>'
    peak = max(row.hourly) or 1
    hole_hours = {h for hole in row.holes for h in range(hole.first_hour, hole.last_hour + 1)}
    bars = []
    for hour, count in enumerate(row.hourly):
        height = 0 if count == 0 else max(2, round(22 * count / peak))
        tip = f"{hour:02d}:00-{hour + 1:02d}:00 UTC: {count} events"
        if hour in hole_hours:
            bars.append(
                f'<rect x="{hour * 5}" y="0" width="4" height="24" class="gap">'
                f"<title>{_e(tip)} (hole)</title></rect>"
            )
        bars.append(
            f'<rect x="{hour * 5}" y="{24 - height}" width="4" height="{height}" class="bar">'
            f"<title>{_e(tip)}</title></rect>"
        )
    label = "".join(
        f'<span class="hole-label">{_e(f"{h.first_hour:02d}-{h.last_hour + 1:02d}h empty")}</span>'
        for h in row.holes
    )
    return (
        f'<svg class="strip" data-holes="{len(hole_hours)}" viewBox="0 0 120 24" width="96" '
        f'height="24" preserveAspectRatio="none" role="img" aria-label="events per hour">'
        f"{''.join(bars)}</svg>{label}"
    )


def _revenue_html(row: BoardRow) -> str:
    if not row.revenue:
        return ""
    if all(total is None for _, totals in row.revenue for total in totals.values()):
        return '<span class="muted">-</span>'
    blocks = []
    for mart, totals in row.revenue:
        lines = []
        served_total = totals.get(mart.served)
        for version, total in totals.items():
            classes = "ver served" if version == mart.served else "ver"
            delta = ""
            if version != mart.served and total is not None and served_total:
                change = (total - served_total) / served_total * 100
                delta = f' <span class="delta">{change:+.1f}%</span>'
            marker = ' <span class="tag">served</span>' if version == mart.served else ""
            lines.append(
                f'<div class="{classes}" data-version="{version}" '
                f'title="{_e(f"{mart.name} v{version}: {mart.measure} {money(total)}")}">'
                f"v{version} {money(total)}{delta}{marker}</div>"
            )
        blocks.append(f'<div class="mart" data-mart="{_e(mart.name)}">{"".join(lines)}</div>')
    return "".join(blocks)


def _row_html(row: BoardRow) -> str:
    flags = "".join(
        f'<span class="flag flag-{_e(flag.name.split()[0])}" title="{_e(flag.note)}">'
        f"{_e(flag.name)}</span>"
        for flag in row.flags
    )
    code = row.code_version or "-"
    code_title = f"{row.facts_model} code version {code}"
    if (
        row.code_version
        and row.current_code_version
        and row.code_version != row.current_code_version
    ):
        code_title += f" (current code: {row.current_code_version})"
    run = (
        f'<span title="run {_e(row.run_id)}">{_e(row.run_label)}<br>'
        f"<code>{_e(row.run_id[:12])}</code></span>"
        if row.run_id
        else "-"
    )
    classes = ["day", f"state-{row.state.replace(' ', '-')}"]
    if row.in_active_run:
        classes.append("in-run")
    revenue_cell = f'<td class="rev">{_revenue_html(row)}</td>' if row.revenue else ""
    lamps = "".join(f'<td class="lamp-cell">{_lamp_html(lamp)}</td>' for lamp in row.lamps)
    return (
        f'<tr class="{" ".join(classes)}" data-day="{row.day}" data-state="{_e(row.state)}" '
        f'data-flags="{_e(",".join(row.flag_names()))}" '
        f'data-attention="{1 if row.needs_attention else 0}">'
        f'<th scope="row">{row.day}<div class="weekday">{row.day:%a}</div></th>'
        f"{lamps}"
        f'<td class="state">{_e(row.state)}</td>'
        f'<td class="num" data-col="rows">{_e(row.rows_vs_source)}</td>'
        f'<td class="num" data-col="quarantined">{number(row.quarantined)}</td>'
        f'<td class="num" data-col="duplicates">{number(row.duplicates)}</td>'
        f'<td class="hours">{_strip_html(row)}</td>'
        f"{revenue_cell}"
        f'<td data-col="code"><code title="{_e(code_title)}">{_e(code)}</code></td>'
        f'<td data-col="run">{run}</td>'
        f'<td class="flags">{flags}</td>'
        "</tr>"
    )


def _banner_html(board: Board) -> str:
    parts = []
    for run in board.active_runs:
        chunks = [days_label(builder) for builder in board.builders if builder.run_id == run.run_id]
        building = ", ".join(chunk for chunk in chunks if chunk)
        now = f" · building {building}" if building else " · between steps"
        parts.append(
            f'<div class="banner running" data-run="{_e(run.run_id)}">'
            f'<span class="pulse"></span>running now: <b>{_e(run.command)}</b> '
            f"{_e(run.describe())}{_e(now)}</div>"
        )
    for holder in board.builders:
        if any(run.run_id == holder.run_id for run in board.active_runs):
            continue
        building = f" · building {days_label(holder)}" if holder.partitions else ""
        parts.append(
            f'<div class="banner running"><span class="pulse"></span>warehouse held by '
            f"{_e(holder.describe())}{_e(building)}</div>"
        )
    return "".join(parts)


def _marts_html(board: Board) -> str:
    if not board.marts:
        return ""
    items = "".join(
        f'<li data-mart="{_e(mart.name)}" data-served="{mart.served}" '
        f'data-pending="{",".join(map(str, mart.pending))}">{_e(mart.describe())}</li>'
        for mart in board.marts
    )
    return f'<section class="box"><h2>versioned marts</h2><ul class="marts">{items}</ul></section>'


def _runs_html(board: Board) -> str:
    if not board.recent_runs and not board.run_notices:
        return ""
    rows = "".join(
        f"<tr><td>{run.started_at:%Y-%m-%d %H:%M}</td><td>{_e(run.command)}</td>"
        f'<td class="outcome-{_e(run.outcome.replace(" ", "-"))}">{_e(run.outcome)}</td>'
        f"<td><code>{_e(run.command_line)}</code></td><td>{_e(run.message or '')}</td></tr>"
        for run in board.recent_runs
    )
    notices = "".join(
        f"<li>{n.created_at:%Y-%m-%d %H:%M} {_e(n.flow_name)} {_e(n.outcome)}: {_e(n.message)}</li>"
        for n in board.run_notices
    )
    notices_html = f'<h2>notifications</h2><ul class="notices">{notices}</ul>' if notices else ""
    return (
        '<section class="box runs"><h2>recent runs (ops.run_log)</h2>'
        "<table><thead><tr><th>started (UTC)</th><th>command</th><th>outcome</th>"
        f"<th>command line</th><th>message</th></tr></thead><tbody>{rows}</tbody></table>"
        f"{notices_html}</section>"
    )


_LAMP_HEADERS = "".join(
    f'<th class="lamp-head" title="{_e(tip)}">{name}</th>'
    for name, tip in (
        ("ready", "the landing's _SUCCESS manifest agrees with its files"),
        ("build", "the dbt build of the day's window"),
        ("audit", "the in-transaction audits: unique keys, every line accounted for"),
        ("publish", "published in ops.partition_ledger"),
    )
)

_LEGEND = "".join(
    _lamp_html(Lamp("legend", state, text)) + f'<span class="legend-text">{text}</span>'
    for state, text in (
        (ON, "done"),
        (OFF, "not started"),
        (FAILED, "failed (hover: why)"),
        (WAITING, "waiting (file or next retry)"),
        (ACTIVE, "building now"),
        (STALE, "published, stale"),
    )
)


def _preview_html(board: Board) -> str:
    """The latest unexpired restatement preview, beside the board: a link to its page."""
    link = board.preview
    if link is None:
        return ""
    what = (
        f"restatement preview {_e(link.preview_id)} of {_e(link.start)}..{_e(link.end)}, "
        f"unpublished, expires {link.expires_at:%Y-%m-%d %H:%M} UTC"
    )
    if link.page:
        uri = Path(link.page).resolve().as_uri()
        what += f': <a href="{_e(uri)}" data-preview-page>{_e(link.page)}</a>'
    return f'<section class="preview" data-preview="{_e(link.preview_id)}">{what}</section>'


def render_html(board: Board, poll_url: str | None = None, fingerprint: str = "") -> str:
    """The board as one self-contained HTML page. With `poll_url` (from --serve) the page
    checks that URL and reloads when the board's fingerprint changes."""
    attributes = ""
    if poll_url:
        attributes = (
            f' data-poll="{_e(poll_url)}" data-fingerprint="{_e(fingerprint)}" '
            f'data-poll-seconds="{2 if board.active_runs or board.builders else 3}"'
        )
    revenue_header = "".join(
        f'<th title="{_e(mart.describe())}">{_e(mart.name)} {_e(mart.measure)}<br>'
        + " / ".join(f"v{v}" for v in mart.versions)
        + "</th>"
        for mart in board.marts[:1]
    )
    return string.Template(_package_text("page.html")).substitute(
        window=_e(board.window),
        days=len(board.rows),
        generated=f"{board.generated_at:%Y-%m-%d %H:%M:%S}",
        warehouse=_e(Path(board.warehouse).name if board.warehouse else ""),
        live="live" if poll_url else "",
        body_attributes=attributes,
        css=_package_text("board.css"),
        data_as_of="".join(f"<div>data as of: {_e(line)}</div>" for line in board.data_as_of),
        banner=_banner_html(board) + _preview_html(board),
        marts=_marts_html(board),
        legend=_LEGEND,
        revenue_header=revenue_header,
        lamp_headers=_LAMP_HEADERS,
        rows="\n".join(_row_html(row) for row in board.rows),
        runs=_runs_html(board),
        script=_package_text("board.js"),
    )


def fingerprint(board: Board) -> str:
    """What the page shows, without the time it was made: equal boards, equal prints."""
    page = render_html(replace(board, generated_at=datetime(2000, 1, 1)))
    return hashlib.sha256(page.encode()).hexdigest()[:16]
