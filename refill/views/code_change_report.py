"""`refill ci`'s report, in markdown (a CI job's summary, a pull request comment): what the
change does to the published numbers of the window, per day, model and market, against
the base branch's build. The tables and number formatting are the restatement preview's
and cutover's (refill.views.preview_report, refill.views.cutover_report)."""

from __future__ import annotations

from refill.rules.code_change import CodeChangeReport
from refill.views.cutover_report import _number, _percent, _signed
from refill.views.preview_report import SHOWN_DAYS, markdown_table

NO_CHANGE = "no published number changes"


def summary(report: CodeChangeReport) -> str:
    """The report's verdict on one line."""
    if not report.changes_numbers:
        return f"{NO_CHANGE} on {report.start}..{report.end}"
    parts = []
    if report.differences:
        days = report.days_changed
        parts.append(
            f"{len(report.differences)} number(s) change on {len(days)} day(s) "
            f"({', '.join(map(str, days))}) in "
            + ", ".join(sorted({d.model for d in report.differences}))
        )
    if report.added:
        parts.append("model(s) added: " + ", ".join(report.added))
    if report.removed:
        parts.append("model(s) removed: " + ", ".join(report.removed))
    return "; ".join(parts)


def markdown(report: CodeChangeReport) -> str:
    lines = [
        f"# refill ci: {report.start}..{report.end}, this change against {report.base_ref}",
        "",
        f"- base: `{report.base_ref}` at {report.base_commit[:12]}; "
        f"change: {report.head_commit[:12]}",
        "- both built on the same window and landing, on CI warehouses; their tests passed",
        "- models compared: " + (", ".join(report.compared) or "none"),
        "",
        f"**{summary(report)}**",
    ]
    if report.added or report.removed:
        lines += ["", "## models added or removed", ""]
        lines += [f"- added: {name} (published by the change only)" for name in report.added]
        lines += [f"- removed: {name} (published by the base only)" for name in report.removed]
    if report.differences:
        rows = [
            [str(d.day), d.model, d.key or "-", d.measure, _number(d.base), _number(d.change)]
            + [_signed(d.delta), _percent(d.base, d.change)]
            for d in report.differences[:SHOWN_DAYS]
        ]
        lines += ["", "## per day, model and market", ""]
        lines += markdown_table(
            ["day", "model", "market", "measure", "base", "this change", "difference", "%"], rows
        )
        if len(report.differences) > SHOWN_DAYS:
            lines += ["", f"(first {SHOWN_DAYS} of {len(report.differences)} shown)"]
    return "\n".join(lines) + "\n"


def failed(base_ref: str, start, end, line: str) -> str:
    """The report of a run that compared nothing: the one line that says why."""
    return f"# refill ci: {start}..{end}, this change against {base_ref}\n\n**{line}**\n"
