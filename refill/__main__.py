# Before importing the command line (Prefect takes seconds to import): a signal during
# start-up ends the command at once with exit 130, as one after it stops at a safe point.
from refill import interrupts

interrupts.stop_at_once_until_armed()

from refill.cli import program  # noqa: E402

program()
