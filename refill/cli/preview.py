"""The command line's side of a restatement preview: which sign-off `--from-preview` is,
and printing a preview's report (flows/preview.py runs it)."""

from __future__ import annotations

import argparse

from refill.errors import UsageError
from refill.rules.preview import checked_preview_id


def preview_sign_off(args: argparse.Namespace) -> bool | str:
    """The backfill flow's `confirm`: --yes, or the preview id --from-preview signs off.
    Refused before anything starts: a preview with a publish, a publish without its
    --restate --yes sign-off."""
    if args.from_preview is None:
        if args.expect_change and not args.preview:
            raise UsageError("--expect-change applies to --preview")
        return args.yes
    if args.preview or args.dry_run:
        raise UsageError("--from-preview publishes a preview: not with --preview or --dry-run")
    if not (args.restate and args.yes):
        raise UsageError(
            f"--from-preview {args.from_preview} publishes restated numbers: "
            "add --restate --yes to sign it off"
        )
    try:
        return checked_preview_id(args.from_preview)
    except Exception as error:
        raise UsageError(str(error)) from None


def print_preview(outcome) -> None:
    if outcome.saved:
        print(outcome.text)
        print("refill backfill: report saved: " + ", ".join(outcome.saved))
    else:
        print(f"refill backfill: {outcome.text}")
