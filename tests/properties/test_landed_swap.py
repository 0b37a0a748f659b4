"""Property (the bytes read are the bytes checked): whatever replaces a ready day's part file,
at whatever moment of a plain `dbt build` after its readiness verdict, nothing of what was
swapped in is stored and the build never hangs. Replaced by a symbolic link to a secret, a
FIFO, a hard link to the secret or another regular file, or grown in place by the secret's
line; at a moment between the verdict and the engine's read, before the read, or after it:
the build publishes exactly the checked bytes (the oracle's numbers) or refuses, naming the
part file, with the warehouse as it was; either way no byte of the secret is anywhere in the
warehouse, and the warehouse builds the day again once the file is restored.

The moments are dbt's own events for the node that reads the landing (the staging lines
model): NodeCompiling (its SQL, and so the reader's open, is still to come), NodeExecuting
(compiled, the statement still to run) and NodeFinished (read, the publish still to come).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from refill.rules import readiness
from refill.rules.window import window_vars
from refill.sample_data import DATASET, payment_line, write_landed_day
from refill.warehouse.dbt_outcomes import outcome_of
from tests.helpers import expected_day, published_tables, query
from tests.properties.conftest import copy_warehouse

DAY = date(2025, 5, 6)
READER = "model.refill.stg_payments__lines"
SECRET = "SECRET-8f3c1a"
KINDS = ("symbolic link", "FIFO", "hard link", "regular file", "grown in place")
# the moment of the swap: the event of the reading node it happens at
MOMENTS = {
    "before the reader opens it": "NodeCompiling",
    "before the statement reads it": "NodeExecuting",
    "after the read, before the publish": "NodeFinished",
}


@dataclass(frozen=True)
class Swap:
    kind: str
    moment: str
    part: int  # which part file
    lines: tuple[int, int]  # payments in each of the two part files


def swaps(kind: str, moment: str):
    return st.builds(
        Swap,
        kind=st.just(kind),
        moment=st.just(moment),
        part=st.integers(0, 1),
        lines=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    )


def secret_lines(count: int) -> bytes:
    """Valid payment lines of the day whose ids carry the secret: were they read, every
    audit would pass and they would be published."""
    lines = [payment_line(DAY, 900 + n).replace("tx-", f"{SECRET}-") for n in range(count)]
    return "".join(line + "\n" for line in lines).encode()


def swap_in(part: Path, kind: str, outside: Path) -> None:
    """Replace the part file at its path (atomically, as an exporter's rename would), or grow
    it in place, with what `kind` says; the secret (same line count) lives at `outside`."""
    staged = part.with_name(".swap")
    if kind == "symbolic link":
        staged.symlink_to(outside)
    elif kind == "FIFO":
        os.mkfifo(staged)
    elif kind == "hard link":
        os.link(outside, staged)
    elif kind == "regular file":
        shutil.copyfile(outside, staged)
    else:  # grown in place: the same file, longer
        with part.open("ab") as stream:
            stream.write(outside.read_bytes())
        return
    os.replace(staged, part)


class FifoWatch:
    """Whether anything opened a FIFO at `path` to read it (a reader that would hang): a
    writer's non-blocking open succeeds only while a reader has it open; it then closes,
    which ends that reader's wait (end of file), so the build finishes either way."""

    def __init__(self, path: Path):
        self.path = path
        self.read_by_someone = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            try:
                if not stat.S_ISFIFO(self.path.lstat().st_mode):
                    continue
                descriptor = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            except OSError:  # no reader (ENXIO), or no FIFO there (yet, or any more)
                continue
            self.read_by_someone = True
            os.close(descriptor)


def every_text(warehouse: Path) -> str:
    """Every row of every table and view of the warehouse, as text."""
    relations = query(
        warehouse,
        "select table_schema || '.' || table_name from information_schema.tables order by 1",
    )
    return repr([query(warehouse, f"select * from {name}") for (name,) in relations])


def payments_of(warehouse: Path) -> list[tuple]:
    return query(
        warehouse,
        "select count(*), coalesce(sum(amount), 0) from main.fct_payments where event_date = ?",
        [DAY],
    )


# Every kind at every moment (15 cases); the files' sizes and which one is swapped drawn
# (one example each in the suite, 20 under `make fuzz`).
@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_part_file_swapped_at_any_moment_publishes_the_checked_bytes_or_nothing(
    seeded_warehouse, dbt_project, kind: str, moment: str
):
    @settings(max_examples=max(settings().max_examples // 25, 1))
    @given(swap=swaps(kind, moment))
    def swapped_during_a_build(swap: Swap) -> None:
        build_with_a_swap(seeded_warehouse, dbt_project, swap)

    swapped_during_a_build()


def build_with_a_swap(seeded_warehouse: Path, dbt_project, swap: Swap) -> None:
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        # GIVEN a ready day of two part files, and a secret outside the landing
        landing = Path(scratch) / "landing"
        warehouse = copy_warehouse(seeded_warehouse, Path(scratch) / "w" / "refill.duckdb")
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        write_landed_day(
            landing,
            DAY,
            [[payment_line(DAY, 10 * p + n) for n in range(c)] for p, c in enumerate(swap.lines)],
        )
        part = readiness.day_folder(landing, DATASET, DAY) / f"part-{swap.part:04d}.jsonl"
        checked = part.read_bytes()
        outside = Path(scratch) / "outside" / "secret.jsonl"
        outside.parent.mkdir()
        outside.write_bytes(secret_lines(swap.lines[swap.part]))
        truth = expected_day(landing, DAY)
        before = published_tables(warehouse)

        # WHEN the part file is swapped at the moment the example names, during a plain
        # `dbt build` of the day
        swapped = []

        def at_the_moment(event) -> None:
            node = getattr(getattr(event.data, "node_info", None), "unique_id", None)
            if event.info.name == MOMENTS[swap.moment] and node == READER and not swapped:
                swap_in(part, swap.kind, outside)
                swapped.append(event.info.name)

        with FifoWatch(part) as fifo:
            result = dbt_project.invoke(
                [
                    "build",
                    "--vars",
                    str(window_vars(DAY, DAY)),
                    "--exclude-resource-type",
                    "unit_test",
                    "seed",
                ],
                callbacks=[at_the_moment],
            )
        outcome = outcome_of(result)

        # THEN the swap happened, nothing read the FIFO, and no byte of the secret is
        # anywhere in the warehouse (a file grown in place is the landing's own file: its
        # new line may sit in a work table, never in a published one)
        assert swapped, "the reading node never reached the moment"
        assert not fifo.read_by_someone
        text = (
            repr(published_tables(warehouse))
            if swap.kind == "grown in place"
            else every_text(warehouse)
        )
        assert SECRET not in text
        # AND the build published exactly the checked bytes, or refused naming the file and
        # changed nothing; a swap before the reader opens the file, or a file grown in
        # place, is always refused (a swap after the open leaves the held file's inode
        # unlinked, which its times show: refused too, when the release sees it)
        if swap.moment == "before the reader opens it" or swap.kind == "grown in place":
            assert not outcome.success
        if outcome.success:
            assert payments_of(warehouse) == [(truth.published, truth.amount)]
        else:
            assert "refill readiness:" in outcome.message, outcome.message
            assert part.name in outcome.message and "\n" not in outcome.message
            assert published_tables(warehouse) == before

        # AND once the file is restored, the warehouse builds the day as the oracle says
        part.unlink()
        part.write_bytes(checked)
        again = dbt_project.build(window_vars(DAY, DAY), include_seeds=False)
        assert again.success, again.message
        assert payments_of(warehouse) == [(truth.published, truth.amount)]
