"""sgr-rig: drive, record, grade and replay web research agents on state-gated retrieval tasks."""

__version__ = "0.1.0"
