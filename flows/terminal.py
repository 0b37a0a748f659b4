"""How flow runs show on the `refill` command line: Prefect's console log, with a failure
said once, as the command's own `refill: error:` line."""

from __future__ import annotations

import logging


class _FailureShownOnce(logging.Filter):
    """On the terminal, a failure is the command's one `refill: error:` line: Prefect's
    error records of the run (a task's failure, the flow's Failed state) stay in the flow
    run's log in the API, not on the console. Retries and progress still show."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(("prefect.flow_runs", "prefect.task_runs")):
            return True
        if record.levelno >= logging.ERROR:
            return False
        return not str(record.msg).startswith("Finished in state Failed")


def show_failures_once() -> None:
    """Install _FailureShownOnce on Prefect's console handlers (set up by importing it)."""
    import prefect.main  # noqa: F401 (configures Prefect's logging)
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger(), *map(logging.getLogger, logging.root.manager.loggerDict)]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, PrefectConsoleHandler) and not any(
                isinstance(f, _FailureShownOnce) for f in handler.filters
            ):
                handler.addFilter(_FailureShownOnce())
