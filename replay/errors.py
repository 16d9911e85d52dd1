"""The replay package's one exception."""


class ReplayError(Exception):
    """An archive or snapshot cannot be read or used; the message says what to do."""
