"""`refill board`: the partition board, a picture of the data `refill status` prints.

A row per day, a lamp per step of its run (ready, building, audited, published), its
rows against the source, code version and run, its events per hour, the versioned marts'
totals and which version readers get, and the run going on now. One job per module, each
importing only those before it:

    model     what the board shows (lamps, flags, rows), plain data
    lamps     the pure decisions of a day's lamps (how far its run went, and why)
    rows      the pure assembly: a row per day, its flags, the runs going on now
    read      the read of the warehouse (refill.warehouse.board_reads, under the readers'
              protocol), then `rows.assemble`
    page      the HTML page (board.css, board.js and page.html are package files)
    markdown  the table of the Prefect artifact (flows/artifacts.py publishes it)
    server    `--serve`: the page on 127.0.0.1, redrawn while a run moves across it

The command line's options and `main` are refill/cli/board.py.

The names below are the board's face to the rest of refill (the command line, the flows).
"""

from refill.views.board.markdown import artifact_markdown, week_ending
from refill.views.board.read import read_extras, snapshot

__all__ = ["artifact_markdown", "read_extras", "snapshot", "week_ending"]
