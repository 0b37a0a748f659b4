"""`refill sample-data`: write deterministic landing days (and the fx rates seed) for a
first run, a demo or a benchmark (refill.sample_data writes them)."""

from __future__ import annotations

import argparse
from pathlib import Path

from refill.cli.parser import day_type
from refill.errors import EXIT_OK
from refill.sample_data import DaySpec, write_days, write_fx_seed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, required=True, help="landing root folder")
    parser.add_argument("--start", type=day_type("start"), required=True, help="first day")
    parser.add_argument("--days", type=int, default=7, help="how many days")
    parser.add_argument("--payments", type=int, default=200, help="payments a day")
    parser.add_argument("--seed", type=int, default=7, help="the generator's seed")
    parser.add_argument("--fx-seed", type=Path, help="also (re)write the fx rates seed CSV here")


def main(args: argparse.Namespace) -> int:
    write_days(args.root, args.start, args.days, DaySpec(payments=args.payments), args.seed)
    if args.fx_seed:
        write_fx_seed(args.fx_seed)
    print(f"wrote {args.days} days from {args.start} under {args.root}")
    return EXIT_OK
