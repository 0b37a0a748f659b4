"""refill's errors and the exit status each one gives. Whether a retry can help is each
error's own verdict (`RefillError.transient`); for an error the engine raised, the warehouse
boundary judges (refill.warehouse.engine.is_transient).

Exit statuses (the one home for them; `refill` returns these):
  0    success (and `refill gaps` found nothing)
  1    a failure or a refusal about the data: a day not ready, an audit mismatch, a
       restatement without sign-off, a warehouse held too long; `refill gaps` found gaps
  2    a usage error: an argument or option value that cannot be right on any data, or a
       configuration one (an unknown DBT_TARGET, a missing adapter, no dbt project)
  130  interrupted (Ctrl-C or SIGTERM), as shells report SIGINT
  141  the output's reader went away (`refill status | head -1`), as shells report SIGPIPE:
       the command stops quietly, without a traceback
"""

from __future__ import annotations

from enum import StrEnum

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_PIPE_CLOSED = 141


class FailedStep(StrEnum):
    """Where a failure happened: ops.partition_attempts.failed_step."""

    READINESS = "readiness"
    BUILD = "build"
    AUDIT = "audit"
    PUBLISH = "publish"
    INTERRUPTED = "interrupted"
    LOCK = "lock"
    OTHER = "other"


class RefillError(RuntimeError):
    """A refusal or failure, said in one line: what, for which partition, what to do next.

    `transient`: a retry after a pause can succeed (the warehouse busy, an I/O hiccup);
    otherwise the same inputs fail the same way and a retry only delays the news.
    """

    exit_code = EXIT_FAILURE

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        failed_step: FailedStep = FailedStep.OTHER,
    ):
        super().__init__(message)
        self.transient = transient
        self.failed_step = FailedStep(failed_step)

    def __reduce__(self):
        # Keyword-only state survives pickling (Prefect keeps a failed run's exception).
        return _rebuild, (type(self), str(self), self.transient, str(self.failed_step))


def _rebuild(cls, message: str, transient: bool, failed_step: str) -> RefillError:
    return cls(message, transient=transient, failed_step=FailedStep(failed_step))


class UsageError(RefillError):
    """An argument, option or setting whose value cannot be right, whatever the data: exit 2."""

    exit_code = EXIT_USAGE
