"""The restatement preview beside the board: `refill board` points at the latest
unexpired preview's page (a link on the page, its path printed), and at no expired one."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from refill.rules.preview import PreviewRecord
from refill.sample_data import write_days
from refill.warehouse import ops, preview_store
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 4, 1)


def kept_preview(connection, preview_id: str, created_hours_ago: int, expires_in_hours: int):
    """A preview's record as `--preview` saves it (the board reads only the record)."""
    now = ops.utc_now()
    record = PreviewRecord(
        preview_id=preview_id,
        run_id=f"run-{preview_id}",
        created_at=now - timedelta(hours=created_hours_ago),
        expires_at=now + timedelta(hours=expires_in_hours),
        start=D1,
        end=D1 + timedelta(days=2),
        models=["fct_payments"],
        chunks=[(D1, D1 + timedelta(days=2))],
        code_versions={},
        fingerprints={},
        published={},
    )
    preview_store.save_record(connection, record, {})


def test_the_board_links_to_the_latest_unexpired_preview_page(
    workspace, tmp_path, monkeypatch, capsys
):
    from refill.cli import main

    write_days(workspace.landing, D1, 3)
    run_backfill(start=D1, end=D1 + timedelta(days=2))
    reports = tmp_path / "reports"
    monkeypatch.setenv("REFILL_PREVIEWS", str(reports))
    with ops.connect(workspace.warehouse) as connection:
        kept_preview(connection, "p00000000000a", created_hours_ago=30, expires_in_hours=1)
        kept_preview(connection, "p00000000000b", created_hours_ago=2, expires_in_hours=-1)
    for preview_id in ("p00000000000a", "p00000000000b"):
        (reports / preview_id).mkdir(parents=True)
        (reports / preview_id / "report.html").write_text("<html></html>")
    out = tmp_path / "board.html"
    window = ["--start", str(D1), "--end", str(D1 + timedelta(days=2))]

    assert main(["board", *window, "--out", str(out)]) == 0

    page = reports / "p00000000000a" / "report.html"
    assert f"latest preview p00000000000a: {page}" in capsys.readouterr().out
    board = out.read_text()
    assert f'href="{page.as_uri()}"' in board
    assert "p00000000000b" not in board  # expired, though newer: not pointed at

    with ops.connect(workspace.warehouse) as connection:
        preview_store.drop_preview(connection, "p00000000000a")  # published or dropped
    assert main(["board", *window, "--out", str(out)]) == 0
    assert "data-preview" not in out.read_text()
    assert "latest preview" not in capsys.readouterr().out
