"""Recording web-agent episodes: every retrieval state as a trajectory step, every exchange in a WARC.

    rec = await Recorder.attach(context, "episode/", options=RecorderOptions(), adapters=[load_adapter(path)])
    async with rec.action({"type": "click", "target": "#apply", "value": None}):
        await page.click("#apply")
    await rec.close()

Logging goes through loguru and is disabled for this package unless `logger.enable("recorders")` is called.
"""

from loguru import logger

from recorders.adapter import Dimension, PageFact, SiteAdapter, load_adapter
from recorders.errors import RecorderError
from recorders.models import Action, RecordingTime, Snapshot, StateDiff, Step
from recorders.options import (
    DEFAULT_REDACT_HEADERS,
    DEFAULT_REDACT_PARAMS,
    RecorderOptions,
)
from recorders.recorder import Recorder
from recorders.redact import REDACTED, Redactor
from recorders.trajectory import read_trajectory
from recorders.warc import CAPTURE_HEADER, STEP_HEADER

logger.disable("recorders")

__all__ = [
    "CAPTURE_HEADER",
    "DEFAULT_REDACT_HEADERS",
    "DEFAULT_REDACT_PARAMS",
    "REDACTED",
    "STEP_HEADER",
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
    "load_adapter",
    "read_trajectory",
]
