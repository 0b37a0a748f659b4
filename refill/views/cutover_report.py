"""Cutover's diff report as a text table: totals per key before and after, the days
compared and changed, the largest changes, and what became of the switch."""

from __future__ import annotations

from decimal import Decimal

from refill.rules.cutover import CutoverReport


def render(report: CutoverReport) -> str:
    """The report as a readable text table."""
    before, after = f"v{report.from_version}", f"v{report.to_version}"
    lines = [f"diff report, {report.model}: {before} (served now) vs {after}"]
    if report.days_compared:
        span = f"{report.days_compared[0]}..{report.days_compared[-1]}"
        lines.append(
            f"days compared: {len(report.days_compared)} ({span}); "
            f"days changed: {len(report.days_changed)}"
        )
    else:
        lines.append("days compared: 0")
    lines.append("")

    # a model that declares no key has one row per day: its totals are the model's
    key_header = report.key_column or "model"
    headers = [key_header]
    for measure in report.measures:
        headers += [f"{measure} {before}", f"{measure} {after}", "change", "change %"]
    rows = []
    grand_before = {m: Decimal(0) for m in report.measures}
    grand_after = {m: Decimal(0) for m in report.measures}
    for totals in report.totals:
        rows.append([totals.key, *_compared(report, totals.before, totals.after)])
        for m in report.measures:
            grand_before[m] += totals.before[m]
            grand_after[m] += totals.after[m]
    rows.append(["total", *_compared(report, grand_before, grand_after)])
    lines += _table(headers, rows)

    headline = report.measures[0]
    lines += ["", f"largest changes ({headline})"]
    if report.largest_changes:
        lines += _table(
            [report.partition_column, key_header, before, after, "change"],
            [
                [str(c.day), c.key, _number(c.before), _number(c.after), _signed(c.delta)]
                for c in report.largest_changes
            ],
        )
    else:
        lines.append("  none: every compared day is the same in both versions")

    status = status_line(report)
    if status:
        lines += ["", status]
    return "\n".join(lines)


def status_line(report: CutoverReport) -> str:
    """What became of the switch: made, or not made because of --dry-run."""
    if report.switched:
        return (
            f"switched: {report.model} now serves v{report.to_version} "
            f"(run {report.run_id}, {report.switched_at:%Y-%m-%d %H:%M:%S} UTC); "
            f"undo with: refill cutover {report.model} --rollback --yes"
        )
    if report.dry_run:
        return f"dry run: nothing switched; {report.model} still serves v{report.from_version}"
    return ""


def _compared(
    report: CutoverReport, before: dict[str, Decimal], after: dict[str, Decimal]
) -> list[str]:
    cells = []
    for measure in report.measures:
        old, new = before[measure], after[measure]
        cells += [_number(old), _number(new), _signed(new - old), _percent(old, new)]
    return cells


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        first = f"  {cells[0]:<{widths[0]}}"
        rest = [f"{cell:>{width}}" for cell, width in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)]


def _number(value: Decimal | int) -> str:
    return f"{value:,}"


def _signed(value: Decimal | int) -> str:
    return f"{value:+,}"


def _percent(before: Decimal | int, after: Decimal | int) -> str:
    if before == 0:
        return "n/a" if after != 0 else "0.0%"
    return f"{(Decimal(after) - Decimal(before)) / abs(Decimal(before)) * 100:+.1f}%"
