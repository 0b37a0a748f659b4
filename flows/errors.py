"""The one error type the command line turns into a one-line message and a non-zero exit."""


class RefillError(RuntimeError):
    """A refusal or failure, said in one line: what, for which partition, what to do next."""
