"""`refill cutover`: coverage and reconciliation before a switch, the report, the switch
itself (atomic for readers), the rollback and the history."""

from __future__ import annotations

import argparse
import json
import threading
import time
from datetime import date, timedelta
from decimal import Decimal

import duckdb
import pytest

from refill.cli import cutover as cutover_module
from refill.cli.cutover import cutover
from refill.errors import RefillError
from refill.rules.cutover import (
    backfill_commands,
    check_covered,
    check_reconciled,
    choose_target,
    day_ranges,
    missing_days,
    versioned_model,
)
from refill.rules.readiness import day_folder
from refill.rules.window import window_vars
from refill.sample_data import DATASET, DaySpec, write_day, write_days
from refill.views.cutover_report import render
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import query, typed_selection

JAN = date(2026, 1, 1)
MODEL = "fct_daily_revenue"
V1, V2, VIEW = "main.fct_daily_revenue_v1", "main.fct_daily_revenue_v2", "main.fct_daily_revenue"


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def build(dbt_project, first: int, last: int, select: str | None = None):
    return dbt_project.build(window_vars(day(first), day(last)), typed_selection(select))


def switch(to: int | None = None, rollback: bool = False, yes: bool = True, dry_run: bool = False):
    flags = ["--rollback"] if rollback else ["--to", str(to)]
    flags += ["--yes"] * yes + ["--dry-run"] * dry_run
    return cutover(
        MODEL,
        to_version=to,
        rollback=rollback,
        yes=yes,
        dry_run=dry_run,
        command_line=" ".join(["refill", "cutover", MODEL, *flags]),
    )


def rows(warehouse, relation: str) -> list[tuple]:
    return query(warehouse, f"select * from {relation} order by event_date, market")


def pointer(warehouse) -> tuple[int, int | None]:
    return query(
        warehouse,
        "select current_version, previous_version from ops.version_pointer where model_name = ?",
        [MODEL],
    )[0]


def history(warehouse) -> list[tuple]:
    return query(
        warehouse,
        "select from_version, to_version, run_id, command from ops.version_switches "
        "where model_name = ? order by switched_at, from_version nulls first",
        [MODEL],
    )


def land_usd_only_day(landing, when: date) -> None:
    """A day whose payments are all captured in USD: both methods agree on it."""
    folder = day_folder(landing, DATASET, when)
    folder.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "transaction_id": f"usd-{when:%Y%m%d}-{n}",
                "event_ts": f"{when}T1{n}:00:00Z",
                "amount": 10 + n,
                "currency": "USD",
                "market": market,
                "status": "captured",
            }
        )
        for n, market in enumerate(["US", "US", "CA"])
    ]
    (folder / "part-0000.jsonl").write_text("".join(f"{line}\n" for line in lines))
    manifest = {"dt": str(when), "files": 1, "records": 3, "exported_at": f"{when}T23:00:00Z"}
    (folder / "_SUCCESS").write_text(json.dumps(manifest))


# ---------------------------------------------------------------------------------------
# Pure decisions


def test_missing_days_become_ranges_and_the_backfills_that_fill_them():
    served = [day(n) for n in range(1, 11)]
    built = [day(n) for n in (4, 5, 9)]

    missing = missing_days(served, built)

    assert missing == [day(n) for n in (1, 2, 3, 6, 7, 8, 10)]
    assert day_ranges(missing) == [(day(1), day(3)), (day(6), day(8)), (day(10), day(10))]
    assert backfill_commands("fct_daily_revenue_v2", missing) == [
        "refill backfill --start 2026-01-01 --end 2026-01-03 --select fct_daily_revenue_v2",
        "refill backfill --start 2026-01-06 --end 2026-01-08 --select fct_daily_revenue_v2",
        "refill backfill --start 2026-01-10 --end 2026-01-10 --select fct_daily_revenue_v2",
    ]
    scattered = [day(n) for n in (1, 3, 5, 7)]
    assert backfill_commands("x_v2", scattered) == [
        "refill backfill --start 2026-01-01 --end 2026-01-07 --select x_v2"
    ]


@pytest.mark.parametrize(
    "current, previous, to, rollback, expected",
    [
        (1, None, 2, False, ("cutover", 2)),
        (2, 1, None, True, ("rollback", 1)),
        (1, 2, None, True, ("rollback", 2)),
        (1, None, None, True, "no previous version"),
        (2, None, 2, False, "already serves v2"),
        (2, 1, 3, True, "--rollback goes back to v1, not v3"),
        (1, None, None, False, "--to N, or --rollback"),
    ],
)
def test_choosing_where_to_switch(current, previous, to, rollback, expected):
    if isinstance(expected, tuple):
        assert choose_target(MODEL, current, previous, to, rollback) == expected
    else:
        with pytest.raises(RefillError, match=expected):
            choose_target(MODEL, current, previous, to, rollback)


def test_each_check_refuses_in_one_line_naming_what_to_do():
    # coverage: the missing days, and the backfills that fill them
    with pytest.raises(RefillError) as uncovered:
        check_covered("fct_daily_revenue_v2", 1, [day(1), day(2), day(3)], [day(2)])
    message = str(uncovered.value)
    assert "not published for 2 day(s) that v1 serves (2026-01-01, 2026-01-03)" in message
    assert message.endswith("--select fct_daily_revenue_v2")
    check_covered("fct_daily_revenue_v2", 1, [day(1)], [day(1), day(2)])
    # reconciliation: the days that differ, and the restatements that rebuild them
    with pytest.raises(RefillError) as unreconciled:
        check_reconciled(
            "fct_daily_revenue_v2",
            "fct_payments",
            [(day(2), "revenue_usd", Decimal("10.00"), Decimal("12.00"))],
        )
    assert "does not reconcile with fct_payments on 1 day(s)" in str(unreconciled.value)
    assert "2026-01-02 revenue_usd published 10.00 vs expected 12.00" in str(unreconciled.value)
    assert "--restate --yes" in str(unreconciled.value)
    check_reconciled("fct_daily_revenue_v2", "fct_payments", [])
    # the registry refuses a model it does not serve, naming the ones it does
    catalog = shared_project().catalog  # the dbt models' meta.refill
    assert versioned_model(MODEL, catalog).relation_name(2) == "fct_daily_revenue_v2"
    with pytest.raises(RefillError, match=r"not a versioned model refill serves \(fct_daily"):
        versioned_model("no_such_model", catalog)
    for message in (str(uncovered.value), str(unreconciled.value)):
        assert "\n" not in message and message.startswith("cutover refused: ")


def test_the_command_line_hooks_parse_the_documented_forms():
    parser = argparse.ArgumentParser(prog="refill cutover")
    cutover_module.add_arguments(parser)

    args = parser.parse_args([MODEL, "--to", "2", "--dry-run"])
    assert (args.model, args.to, args.rollback, args.yes, args.dry_run) == (
        MODEL,
        2,
        False,
        False,
        True,
    )
    assert cutover_module.command_line_of(args) == f"refill cutover {MODEL} --to 2 --dry-run"
    rollback = parser.parse_args([MODEL, "--rollback", "--yes"])
    assert cutover_module.command_line_of(rollback) == f"refill cutover {MODEL} --rollback --yes"
    for wrong in ([MODEL], [MODEL, "--to", "2", "--rollback"]):
        with pytest.raises(SystemExit):
            parser.parse_args(wrong)


# ---------------------------------------------------------------------------------------
# On a warehouse


def test_cutover_is_refused_while_v2_misses_days_and_allowed_after_their_backfill(
    dbt_project, workspace
):
    # GIVEN six days of history built before v2 existed, and v2 built only for the last two
    write_days(workspace.landing, JAN, 6, DaySpec(payments=40))
    assert build(dbt_project, 1, 6, select="+fct_daily_revenue_v1 payments_quarantine").success
    assert build(dbt_project, 5, 6, select="fct_daily_revenue_v2").success
    v1_before = rows(workspace.warehouse, V1)

    # WHEN a cutover to v2 is asked for
    with pytest.raises(RefillError) as refused:
        switch(to=2)

    # THEN it is refused, naming the missing days and the command that fills them
    message = str(refused.value)
    assert "\n" not in message
    assert "fct_daily_revenue_v2 is not published for 4 day(s)" in message
    assert "(2026-01-01..2026-01-04)" in message
    assert (
        "refill backfill --start 2026-01-01 --end 2026-01-04 --select fct_daily_revenue_v2"
        in message
    )
    assert pointer(workspace.warehouse) == (1, None)

    # WHEN v2 alone is backfilled over those days
    assert build(dbt_project, 1, 4, select="fct_daily_revenue_v2").success

    # THEN v1 and the pointer did not move, and the cutover goes through
    assert rows(workspace.warehouse, V1) == v1_before
    assert pointer(workspace.warehouse) == (1, None)
    report = switch(to=2)
    assert report.switched
    assert pointer(workspace.warehouse) == (2, 1)
    assert rows(workspace.warehouse, VIEW) == rows(workspace.warehouse, V2)


def test_cutover_and_rollback_switch_what_readers_get_and_record_both(
    dbt_project, workspace, capsys
):
    # GIVEN three built days, v1 served
    write_days(workspace.landing, JAN, 3, DaySpec(payments=60))
    assert build(dbt_project, 1, 3).success
    assert rows(workspace.warehouse, VIEW) == rows(workspace.warehouse, V1)
    parser = argparse.ArgumentParser(prog="refill cutover")
    cutover_module.add_arguments(parser)

    # WHEN the cutover is only dry-run, or asked for without --yes
    assert cutover_module.main(parser.parse_args([MODEL, "--to", "2", "--dry-run"])) == 0
    printed = capsys.readouterr().out
    with pytest.raises(RefillError, match="needs --yes"):
        switch(to=2, yes=False)

    # THEN the report was printed and nothing switched
    assert "refill cutover fct_daily_revenue: v1 -> v2" in printed
    assert "largest changes (revenue_usd)" in printed
    assert "dry run: nothing switched" in printed
    assert pointer(workspace.warehouse) == (1, None)
    assert len(history(workspace.warehouse)) == 1

    # WHEN the cutover is made through the command-line hook
    assert cutover_module.main(parser.parse_args([MODEL, "--to", "2", "--yes"])) == 0

    # THEN readers get v2's rows
    assert "switched: fct_daily_revenue now serves v2" in capsys.readouterr().out
    assert pointer(workspace.warehouse) == (2, 1)
    assert rows(workspace.warehouse, VIEW) == rows(workspace.warehouse, V2)

    # AND a later build of everything, with a new day, does not move the pointer
    write_day(workspace.landing, day(4), DaySpec(payments=60))
    assert build(dbt_project, 3, 4).success
    assert pointer(workspace.warehouse) == (2, 1)
    assert rows(workspace.warehouse, VIEW) == rows(workspace.warehouse, V2)
    assert {row[0] for row in rows(workspace.warehouse, VIEW)} == {day(n) for n in (1, 2, 3, 4)}

    # WHEN it is rolled back
    report = switch(rollback=True)

    # THEN readers get v1's rows again
    assert report.action == "rollback" and report.switched
    assert pointer(workspace.warehouse) == (1, 2)
    assert rows(workspace.warehouse, VIEW) == rows(workspace.warehouse, V1)

    # AND the history holds the first pointer, the cutover and the rollback, with run ids
    recorded = history(workspace.warehouse)
    assert [(old, new, command) for old, new, _, command in recorded[1:]] == [
        (1, 2, "refill cutover fct_daily_revenue --to 2 --yes"),
        (2, 1, "refill cutover fct_daily_revenue --rollback --yes"),
    ]
    assert recorded[0][:2] == (None, 1)
    assert recorded[2][2] == report.run_id and report.run_id.startswith("cutover-")


def test_a_reader_during_the_switch_only_ever_sees_all_v1_or_all_v2(dbt_project, workspace):
    # GIVEN three built days, and each version's totals as a reader would add them up
    write_days(workspace.landing, JAN, 3, DaySpec(payments=60))
    assert build(dbt_project, 1, 3).success
    totals_sql = (
        "select count(*), sum(revenue_usd), sum(transactions), "
        "min(methodology_version), max(methodology_version) from {}"
    )
    (all_v1,) = query(workspace.warehouse, totals_sql.format(V1))
    (all_v2,) = query(workspace.warehouse, totals_sql.format(V2))
    assert all_v1 != all_v2

    # WHEN a reader thread queries the view in a loop while the pointer is switched back
    # and forth (same process, its own connection: DuckDB shares the open database)
    seen: list[tuple] = []
    stop = threading.Event()

    def read() -> None:
        reader = duckdb.connect(str(workspace.warehouse))
        try:
            while not stop.is_set():
                seen.append(reader.execute(totals_sql.format(VIEW)).fetchone())
        finally:
            reader.close()

    def wait_for_reads(count: int) -> None:
        deadline = time.monotonic() + 30
        while len(seen) < count and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert len(seen) >= count, "the reader stopped reading"

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for n in range(6):
            wait_for_reads(len(seen) + 20)
            if n % 2 == 0:
                switch(to=2)
            else:
                switch(rollback=True)
        wait_for_reads(len(seen) + 20)
    finally:
        stop.set()
        thread.join(timeout=30)

    # THEN every read is exactly all of v1 or all of v2, and both were seen
    assert set(seen) <= {all_v1, all_v2}
    assert {all_v1, all_v2} <= set(seen)
    assert len(history(workspace.warehouse)) == 1 + 6


def test_the_diff_report_equals_an_independent_computation(dbt_project, workspace):
    # GIVEN four built days; on the third every payment is captured in USD, so the
    # methods agree on it
    write_days(workspace.landing, JAN, 2, DaySpec(payments=80))
    land_usd_only_day(workspace.landing, day(3))
    write_day(workspace.landing, day(4), DaySpec(payments=80))
    assert build(dbt_project, 1, 4).success

    # WHEN the cutover is dry-run
    report = switch(to=2, yes=False, dry_run=True)

    # THEN the totals per market are v1's and v2's own sums
    def sums(relation: str) -> dict[str, tuple]:
        return {
            market: (revenue, transactions)
            for market, revenue, transactions in query(
                workspace.warehouse,
                f"select market, sum(revenue_usd), sum(transactions) from {relation} group by 1",
            )
        }

    v1_sums, v2_sums = sums(V1), sums(V2)
    assert {t.key for t in report.totals} == set(v1_sums) | set(v2_sums)
    for totals in report.totals:
        assert (totals.before["revenue_usd"], totals.before["transactions"]) == v1_sums.get(
            totals.key, (0, 0)
        )
        assert (totals.after["revenue_usd"], totals.after["transactions"]) == v2_sums.get(
            totals.key, (0, 0)
        )

    # AND the changed days are those whose rows differ between the versions
    (changed,) = query(
        workspace.warehouse,
        f"""
        with v1 as (select event_date, market, revenue_usd, transactions from {V1}),
        v2 as (select event_date, market, revenue_usd, transactions from {V2})
        select list(distinct event_date order by event_date) from (
            (select * from v1 except select * from v2)
            union all
            (select * from v2 except select * from v1)
        )
        """,
    )[0]
    assert report.days_changed == changed == [day(1), day(2), day(4)]
    assert report.days_compared == [day(1), day(2), day(3), day(4)]

    # AND the largest changes are the five largest revenue differences, day and market
    v1_rows = dict(
        ((d, m), r)
        for d, m, r in query(
            workspace.warehouse, f"select event_date, market, revenue_usd from {V1}"
        )
    )
    v2_rows = dict(
        ((d, m), r)
        for d, m, r in query(
            workspace.warehouse, f"select event_date, market, revenue_usd from {V2}"
        )
    )
    deltas = {
        key: v2_rows.get(key, Decimal(0)) - v1_rows.get(key, Decimal(0))
        for key in set(v1_rows) | set(v2_rows)
    }
    largest = sorted((k for k, d in deltas.items() if d), key=lambda k: (-abs(deltas[k]), k))[:5]
    assert [(c.day, c.key, c.delta) for c in report.largest_changes] == [
        (d, m, deltas[(d, m)]) for d, m in largest
    ]
    assert all(c.before == v1_rows.get((c.day, c.key), 0) for c in report.largest_changes)

    # AND the rendered table prints the same figures
    text = render(report)
    grand_v1 = sum(v[0] for v in v1_sums.values())
    grand_v2 = sum(v[0] for v in v2_sums.values())
    assert f"{grand_v1:,}" in text and f"{grand_v2:,}" in text
    assert "days compared: 4 (2026-01-01..2026-01-04); days changed: 3" in text


def test_cutover_is_refused_while_a_v2_day_does_not_reconcile(dbt_project, workspace):
    # GIVEN three built days, then day 2 re-exported and only the facts rebuilt
    write_days(workspace.landing, JAN, 3, DaySpec(payments=60))
    assert build(dbt_project, 1, 3).success
    write_day(workspace.landing, day(2), DaySpec(payments=60, amount_factor=1.3, export_version=2))
    assert build(dbt_project, 2, 2, select="+fct_payments").success

    # WHEN a cutover to v2 is asked for
    with pytest.raises(RefillError) as refused:
        switch(to=2)

    # THEN it is refused, naming the day, the measure and the rebuild, and nothing moved
    message = str(refused.value)
    assert "fct_daily_revenue_v2 does not reconcile with fct_payments on 1 day(s)" in message
    assert "2026-01-02 gross_revenue_usd published" in message
    assert (
        "refill backfill --start 2026-01-02 --end 2026-01-02 --select fct_daily_revenue_v2"
        " --restate --yes" in message
    )
    assert pointer(workspace.warehouse) == (1, None)

    # WHEN v2 alone is rebuilt for that day, THEN the cutover goes through
    assert build(dbt_project, 2, 2, select="fct_daily_revenue_v2").success
    assert switch(to=2).switched
    assert rows(workspace.warehouse, VIEW) == rows(workspace.warehouse, V2)
