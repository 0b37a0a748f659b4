"""Every `refill` subcommand, each a module of refill/cli/: its `--help` works and exits 0
(in a child process, as a user runs it), and the top-level help lists every command."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from refill.cli import COMMANDS, build_parser
from refill.sample_data import DATASET


def _refill(*argv: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "refill", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )


def test_the_help_lists_every_command():
    text = build_parser(this_installation=False).format_help()
    for name, _, _ in COMMANDS:
        assert name in text


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS])
def test_each_command_s_help_works(name):
    done = _refill(name, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: refill {name}")
    assert done.stderr == ""


def test_sample_data_writes_the_days(tmp_path):
    done = _refill("sample-data", "--root", str(tmp_path), "--start", "2026-01-01", "--days", "2")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / DATASET / "dt=2026-01-01" / "_SUCCESS").is_file()
    assert (tmp_path / DATASET / "dt=2026-01-02" / "_SUCCESS").is_file()
    assert not (tmp_path / DATASET / "dt=2026-01-03").exists()


def test_sample_data_refuses_a_bad_day_in_one_line(tmp_path):
    done = _refill("sample-data", "--root", str(tmp_path), "--start", "2026-13-01")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "refill: error:" in done.stderr
    assert list(tmp_path.iterdir()) == []
