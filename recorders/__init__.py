"""Recording web-agent episodes: every retrieval state as a trajectory step, every exchange in a WARC.

    rec = await Recorder.attach(context, "episode/", options=RecorderOptions(), adapters=[load_adapter(path)])
    async with rec.action(Action(type="click", target="#apply"), page=page):
        await page.click("#apply")
    await rec.close()

Logging goes through loguru and is disabled for this package unless `logger.enable("recorders")` is called.
"""

from typing import TYPE_CHECKING

from loguru import logger

from recorders.adapter import Dimension, PageFact, SiteAdapter, load_adapter
from recorders.errors import RecorderError, TrajectoryError
from recorders.files import SCREENS_DIR, TRAJECTORY_FILE, WARC_FILE
from recorders.models import Action, RecordingTime, Snapshot, StateDiff, Step
from recorders.options import (
    DEFAULT_REDACT_HEADERS,
    DEFAULT_REDACT_PARAMS,
    RecorderOptions,
)
from recorders.redact import REDACTED, Redactor
from recorders.trajectory import read_trajectory
from rigwarc.dialect import CAPTURE_HEADER, MISSING_HEADER, STEP_HEADER

if TYPE_CHECKING:
    from recorders.recorder import Recorder

logger.disable("recorders")


def __getattr__(name: str) -> object:
    """`Recorder` is imported on first use, so reading trajectories and adapters needs no playwright."""
    if name == "Recorder":
        from recorders.recorder import Recorder

        return Recorder
    raise AttributeError(f"module 'recorders' has no attribute {name!r}")


__all__ = [
    "CAPTURE_HEADER",
    "DEFAULT_REDACT_HEADERS",
    "DEFAULT_REDACT_PARAMS",
    "MISSING_HEADER",
    "REDACTED",
    "SCREENS_DIR",
    "STEP_HEADER",
    "TRAJECTORY_FILE",
    "WARC_FILE",
    "Action",
    "Dimension",
    "PageFact",
    "Recorder",
    "RecorderError",
    "RecorderOptions",
    "RecordingTime",
    "Redactor",
    "SiteAdapter",
    "Snapshot",
    "StateDiff",
    "Step",
    "TrajectoryError",
    "load_adapter",
    "read_trajectory",
]
