"""Step images: where they come from in a run (`--step-images`), as recorder options.

- `live` (the default): a screenshot of each step, taken while it is the page's state (`recorders.screens`).
- `dom`: nothing is pictured while the agent acts; each step names its image (`screens/NNNN.jpg`) and `rig render`
  (`rig.commands.render`) draws it later from the step's archived DOM snapshot and resources (`replay.render`), with
  no network. Recording then costs what recording without images costs, and images are drawn only for the episodes
  someone looks at.
- `off`: no images.
"""

from __future__ import annotations

from typing import Literal

from recorders import RecorderOptions
from rig.errors import InputError

StepImages = Literal["live", "dom", "off"]
STEP_IMAGES: tuple[StepImages, ...] = ("live", "dom", "off")


def recorder_options(step_images: StepImages) -> RecorderOptions | None:
    """The recorder options for `--step-images` (None: the recorder's defaults); InputError for another value."""
    if step_images not in STEP_IMAGES:
        raise InputError("--step-images", None, f"{step_images!r}: choose one of {', '.join(STEP_IMAGES)}")
    if step_images == "live":
        return None
    if step_images == "dom":
        return RecorderOptions(screenshot_source="dom")
    return RecorderOptions(screenshots="off")
