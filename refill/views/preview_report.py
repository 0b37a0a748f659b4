"""A restatement preview's report: the printed text, the markdown (saved, and the Prefect
artifact), the JSON, and the page beside the board (its look: board.css; a row per day,
a bar for its change)."""

from __future__ import annotations

import html
import json
from decimal import Decimal
from importlib import resources
from pathlib import Path

from refill.rules.preview import PreviewRecord, PreviewReport
from refill.views.cutover_report import _number, _percent, _signed, _table

SHOWN_DAYS = 400  # the text lists at most this many days; the files hold all


def _day_rows(report: PreviewReport) -> list[list[str]]:
    return [
        [
            str(c.day),
            c.model,
            _number(c.old_rows),
            _number(c.new_rows),
            _signed(c.new_rows - c.old_rows),
            c.measure or "-",
            _number(c.old_amount),
            _number(c.new_amount),
            _signed(c.amount_change),
            _percent(c.old_amount, c.new_amount),
        ]
        for c in report.days[:SHOWN_DAYS]
    ]


def _sections(report: PreviewReport, record: PreviewRecord) -> list[tuple[str, list[str], list]]:
    """The report's tables: per day and model, then each keyed model per day and key and
    per month (headed by its declared key's name), and the largest changes."""
    days = (
        "per day and model",
        ["day", "model", "rows old", "rows new", "rows change"]
        + ["measure", "old", "new", "change", "change %"],
        _day_rows(report),
    )
    per_key = [
        (
            f"per day and {keyed.key_column} ({keyed.name})",
            ["day", "model", keyed.key_column, "measure", "old", "new", "change"],
            [
                [str(c.day), c.model, c.key, c.measure, _number(c.old_amount)]
                + [_number(c.new_amount), _signed(c.amount_change)]
                for c in report.by_key_of(keyed)
                if c.changed
            ][:SHOWN_DAYS],
        )
        for keyed in report.keyed_models()
    ]
    largest = (
        "largest changes",
        ["day", "model", "key", "measure", "old", "new", "change"],
        [
            [str(c.day), c.model, c.key or "-", c.measure or "-", _number(c.old_amount)]
            + [_number(c.new_amount), _signed(c.amount_change)]
            for c in report.largest()
        ],
    )
    by_month = [
        (
            f"total change by {keyed.key_column} and month ({keyed.name})",
            ["month", keyed.key_column, "measure", "old", "new", "change", "change %"],
            [
                [t.month, t.key, t.measure, _number(t.old), _number(t.new), _signed(t.change)]
                + [_percent(t.old, t.new)]
                for t in report.totals_by_key_and_month(keyed)
            ],
        )
        for keyed in report.keyed_models()
    ]
    return [days, *per_key, largest, *by_month]


def _headline(report: PreviewReport, record: PreviewRecord) -> list[str]:
    compared = ", ".join(["rows", *report.measures])
    lines = [
        f"restatement preview {report.preview_id}: {report.start}..{report.end} "
        f"(compared: {compared}); nothing published",
        f"days changed: {len(report.days_changed)}, unchanged: {len(report.days_unchanged)}",
    ]
    if report.expected is not None:
        unexpected = report.unexpected
        lines.append(
            f"expected to change: {report.expected}; changed outside it: "
            + (", ".join(map(str, unexpected)) if unexpected else "none")
        )
    lines.append(
        f"kept until {record.expires_at:%Y-%m-%d %H:%M} UTC; publish exactly these numbers with: "
        f"refill backfill --start {record.start} --end {record.end} --restate --yes "
        f"--from-preview {record.preview_id}"
    )
    return lines


def render(report: PreviewReport, record: PreviewRecord) -> str:
    lines = _headline(report, record)
    if report.unexpected:
        lines.append(
            "WARNING: " + str(len(report.unexpected)) + " day(s) change outside --expect-change"
        )
    for title, headers, rows in _sections(report, record):
        lines += ["", title]
        lines += _table(headers, rows) if rows else ["  none"]
    return "\n".join(lines)


def markdown(report: PreviewReport, record: PreviewRecord) -> str:
    lines = [f"# {_headline(report, record)[0]}", ""]
    lines += [f"- {line}" for line in _headline(report, record)[1:]]
    for title, headers, rows in _sections(report, record):
        lines += ["", f"## {title}", ""]
        lines += markdown_table(headers, rows) if rows else ["none"]
    return "\n".join(lines) + "\n"


def markdown_table(headers: list[str], rows: list[list]) -> list[str]:
    """A markdown table's lines (the saved report and `refill ci`'s)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows]


def page(report: PreviewReport, record: PreviewRecord) -> str:
    """The page beside the board: the board's stylesheet, a row per day (the headline
    model's rows and first measure, old and new), a bar for its change scaled to the
    largest change."""
    css = resources.files("refill.views.board").joinpath("board.css").read_text("utf-8")
    model = _headline_model(report)
    of_model = [c for c in report.days if c.model == model]
    measure = of_model[0].measure if of_model else ""
    facts = [c for c in of_model if c.measure == measure]
    scale = max((abs(c.amount_change) for c in facts), default=Decimal(0)) or Decimal(1)
    rows = []
    for c in facts:
        width = int(abs(c.amount_change) / scale * 100)
        colour = "var(--bad)" if c.amount_change < 0 else "var(--ok)"
        flag = " ⚑" if c.day in report.unexpected else ""
        rows.append(
            f"<tr><td>{c.day}{flag}</td><td class=num>{_number(c.old_rows)}</td>"
            f"<td class=num>{_number(c.new_rows)}</td><td class=num>{_number(c.old_amount)}</td>"
            f"<td class=num>{_number(c.new_amount)}</td><td class=num>{_signed(c.amount_change)}"
            f'</td><td style="width:30%"><div style="height:10px;width:{width}%;'
            f'background:{colour}"></div></td></tr>'
        )
    summary = "".join(f"<div>{html.escape(line)}</div>" for line in _headline(report, record))
    label = html.escape(measure or "no measure")
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>refill preview {report.preview_id}</title><style>{css}</style></head><body>"
        f"<header><h1>refill restatement preview</h1><span class=muted>{report.preview_id}"
        f"</span></header><div class=asof>{summary}</div>"
        '<div class=scroll><table class="board"><thead><tr><th>day</th><th>rows old</th>'
        f"<th>rows new</th><th>{label} old</th><th>{label} new</th><th>change</th><th></th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div></body></html>\n"
    )


def _headline_model(report: PreviewReport) -> str:
    return report.facts_model or (report.days[0].model if report.days else "")


def save(report: PreviewReport, record: PreviewRecord, folder: Path) -> list[str]:
    """report.json, report.md and report.html in `folder`; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "report.json": json.dumps(report.as_json(), indent=2, default=str),
        "report.md": markdown(report, record),
        "report.html": page(report, record),
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]
