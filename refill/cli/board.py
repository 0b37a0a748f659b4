"""`refill board`: its options, and the page written to a file or served (--serve)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from refill import settings
from refill.rules import planning
from refill.views import status
from refill.views.board import page, read, server
from refill.warehouse.dbt_runner import shared_project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`refill board` options."""
    parser.add_argument("--start", type=lambda raw: planning.parse_day("start", raw))
    parser.add_argument("--end", type=lambda raw: planning.parse_day("end", raw))
    parser.add_argument("--out", help="the HTML file to write (default board.html)")
    parser.add_argument(
        "--serve", action="store_true", help="serve it on 127.0.0.1; it reloads while runs move"
    )
    parser.add_argument(
        "--port", type=int, default=settings.BOARD_PORT, help="--serve port (0: any free one)"
    )
    parser.add_argument(
        "--lock-wait",
        type=float,
        default=read.DEFAULT_LOCK_WAIT_SECONDS,
        help="seconds to wait for a build in progress before reading the warehouse",
    )


def main(args: argparse.Namespace) -> int:
    """`refill board`: write the page, or serve it (--serve) until interrupted."""
    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    project = shared_project()
    if args.serve:
        print(f"refill board: serving {window} on 127.0.0.1 (Ctrl-C stops)", flush=True)
        server.serve(project, window, port=args.port, out=Path(args.out) if args.out else None)
        return 0
    out = Path(args.out or "board.html")
    print(f"refill board: {window} -> {out}", flush=True)
    board = read.snapshot(project, window, lock_wait_seconds=args.lock_wait)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page.render_html(board), encoding="utf-8")
    attention = sum(1 for row in board.rows if row.needs_attention)
    print(f"refill board: wrote {out} ({len(board.rows)} days, {attention} need attention)")
    if board.preview is not None:
        where = board.preview.page or "saved with --report-dir"
        print(f"refill board: latest preview {board.preview.preview_id}: {where}")
    return 0
