"""The two ways a tcp-tune command fails: before acting (TuneError, nothing
was changed) or while acting (StepError, the transaction rolls back)."""


class TuneError(Exception):
    """A validation or usage error: nothing was changed."""


class StepError(Exception):
    """A step failed while acting."""
