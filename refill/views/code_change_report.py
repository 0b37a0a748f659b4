"""`refill ci`'s report, in markdown (a CI job's summary, a pull request comment): what the
change does to the published models of the window, per day, model and key, against the
base branch's build: every number that moves, every other value that changes, the columns
and models that come or go. The tables and number formatting are the restatement
preview's and cutover's (refill.views.preview_report, refill.views.cutover_report)."""

from __future__ import annotations

from refill.rules.code_change import CodeChangeReport, Difference, ValueDifference
from refill.views.cutover_report import _number, _percent, _signed
from refill.views.preview_report import SHOWN_DAYS, markdown_table

NO_CHANGE = "no published number changes"
EXAMPLE_CHARS = 60  # a value shown as an example is cut to this many characters


def summary(report: CodeChangeReport) -> str:
    """The report's verdict on one line."""
    if report.base_failure:
        return (
            f"the base {report.base_ref} {report.base_failure}: nothing compared; "
            "this change built and its tests passed"
        )
    if not report.changes_numbers:
        return f"{NO_CHANGE} on {report.start}..{report.end}"
    parts = []
    if report.differences or report.value_differences:
        days = report.days_changed
        moved = [*report.differences, *report.value_differences]
        counts = []
        if report.differences:
            counts.append(f"{len(report.differences)} number(s)")
        if report.value_differences:
            counts.append(f"{len(report.value_differences)} other value(s)")
        parts.append(
            f"{' and '.join(counts)} change on {len(days)} day(s) "
            f"({', '.join(map(str, days))}) in " + ", ".join(sorted({d.model for d in moved}))
        )
    if report.column_changes:
        parts.append(
            "column(s) added, removed or retyped: "
            + ", ".join(f"{c.model}.{c.column}" for c in report.column_changes)
        )
    if report.not_compared:
        parts.append("not compared: " + ", ".join(sorted(report.not_compared)))
    if report.added:
        parts.append("model(s) added: " + ", ".join(report.added))
    if report.removed:
        parts.append("model(s) removed: " + ", ".join(report.removed))
    return "; ".join(parts)


def markdown(report: CodeChangeReport) -> str:
    lines = [
        f"# refill ci: {report.start}..{report.end}, this change against {report.base_ref}",
        "",
        f"- base: `{report.base_ref}` at {report.base_commit[:12]}; change: {report.change}",
    ]
    if report.base_failure:
        lines += [
            "- the base did not build; this change built on the window and landing, on a CI "
            "warehouse, and its tests passed",
            "",
            f"**{summary(report)}**",
        ]
        return "\n".join(lines) + "\n"
    lines += [
        "- both built on the same window and landing, on CI warehouses; their tests passed",
        "- models compared (every published column, per day and key): "
        + (", ".join(_with_key(report, name) for name in report.compared) or "none"),
        "",
        f"**{summary(report)}**",
    ]
    if report.added or report.removed:
        lines += ["", "## models added or removed", ""]
        lines += [f"- added: {name} (published by the change only)" for name in report.added]
        lines += [f"- removed: {name} (published by the base only)" for name in report.removed]
    if report.not_compared:
        lines += ["", "## models not compared", ""]
        lines += [f"- {name}: {why}" for name, why in sorted(report.not_compared.items())]
    if report.column_changes:
        rows = [
            [c.model, c.column, c.base_type or "(none)", c.change_type or "(none)"]
            for c in report.column_changes
        ]
        lines += ["", "## columns added, removed or retyped", ""]
        lines += markdown_table(["model", "column", "base", "this change"], rows)
    if report.differences:
        lines += ["", "## numbers, per day, model and key", ""]
        lines += _shown(
            markdown_table(
                ["day", "model", "key", "measure", "base", "this change", "difference", "%"],
                [_number_row(report, d) for d in report.differences[:SHOWN_DAYS]],
            ),
            len(report.differences),
        )
    if report.value_differences:
        lines += ["", "## other values, per day, model and key", ""]
        lines += _shown(
            markdown_table(
                ["day", "model", "key", "column", "only in base", "only in this change"],
                [_value_row(report, d) for d in report.value_differences[:SHOWN_DAYS]],
            ),
            len(report.value_differences),
        )
    return "\n".join(lines) + "\n"


def failed(report: CodeChangeReport, line: str) -> str:
    """The report of a run that compared nothing: the one line that says why."""
    head = f"# refill ci: {report.start}..{report.end}, this change against {report.base_ref}"
    lines = [head, "", f"- base: `{report.base_ref}` at {report.base_commit[:12]}; "]
    lines[-1] += f"change: {report.change}"
    if report.base_failure:
        lines.append(f"- the base {report.base_ref} {report.base_failure}")
    return "\n".join([*lines, "", f"**{line}**"]) + "\n"


def _with_key(report: CodeChangeReport, relation: str) -> str:
    key = report.key_columns.get(relation)
    return f"{relation} (by {key})" if key else relation


def _key(report: CodeChangeReport, model: str, key: str) -> str:
    column = report.key_columns.get(model)
    return f"{column}={_cut(key)}" if column else "-"


def _number_row(report: CodeChangeReport, d: Difference) -> list[str]:
    return [str(d.day), d.model, _key(report, d.model, d.key), d.measure] + [
        _number(d.base),
        _number(d.change),
        _signed(d.delta),
        _percent(d.base, d.change),
    ]


def _value_row(report: CodeChangeReport, d: ValueDifference) -> list[str]:
    return [str(d.day), d.model, _key(report, d.model, d.key), d.column] + [
        _values(d.only_in_base, d.base_example),
        _values(d.only_in_change, d.change_example),
    ]


def _values(count: int, example: str | None) -> str:
    if not count:
        return "-"
    shown = "null" if example is None else f"`{_cut(example)}`"
    return f"{count:,} value(s), first {shown}"


def _cut(text: str) -> str:
    text = text.replace("`", "'").replace("|", "/").replace("\n", " ")
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"


def _shown(table: list[str], total: int) -> list[str]:
    if total > SHOWN_DAYS:
        return [*table, "", f"(first {SHOWN_DAYS} of {total} shown)"]
    return table
