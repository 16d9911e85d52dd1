"""Recorder settings: screenshots, settle timeouts, redaction and what each step captures."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: URL/form/body parameter names whose values never reach an artifact (matched by their word parts, whatever the case,
#: separators, numbers, versions or `X-` prefix: `recorders.redact.base_name`); names whose word parts say secret are
#: redacted as well (`recorders.redact.secret_name`).
DEFAULT_REDACT_PARAMS = [
    "token", "access_token", "refresh_token", "id_token", "auth_token", "csrf_token", "csrfmiddlewaretoken",
    "_csrf", "xsrf_token", "key", "api_key", "apikey", "api-key", "password", "passwd", "pwd", "pass",
    "secret", "client_secret", "session", "sessionid", "session_id", "sid", "signature", "sig", "auth",
]  # fmt: skip

#: Headers dropped from every request and response record.
DEFAULT_REDACT_HEADERS = ["cookie", "set-cookie", "authorization", "proxy-authorization"]


class RecorderOptions(BaseModel):
    """What the recorder captures per step and how long it waits for a page to settle."""

    model_config = ConfigDict(extra="forbid")

    screenshots: Literal["every", "on_change", "off"] = Field(
        default="on_change", description="a JPEG per step, only when the DOM changed, or none"
    )
    jpeg_quality: int = Field(default=60, ge=1, le=100)
    screenshot_scale: float = Field(
        default=0.625,
        gt=0,
        le=1,
        description="scale the viewport image by this factor (0.625: 800x450 for a 1280x720 viewport, the size of a "
        "Playwright trace's screenshots; 1: full size)",
    )
    screenshot_source: Literal["live", "dom"] = Field(
        default="live",
        description="where step images come from: `live`, a screenshot of each step taken while it is the page's "
        "state (`recorders.screens`); or `dom`: none while recording, each rendered afterwards from the step's "
        "archived DOM snapshot and resources (`replay.render`, `rig render`), except a step whose page holds a canvas, "
        "video or plugin (no DOM shows those), which gets a screenshot at once",
    )
    screenshot_wait_ms: int = Field(
        default=3000,
        ge=0,
        description="before an action, wait at most this long for the screenshot of the step before it, asking again "
        "while no frame came (a live image; 0: never, and a step the next action follows within half a second then "
        "has no image); a step nobody acts after is tried as long, and at least 3 s",
    )
    network_quiet_ms: int = Field(default=50, ge=0, description="no request in flight for this long")
    dom_quiet_ms: int = Field(default=50, ge=0, description="no DOM mutation for this long")
    max_settle_ms: int = Field(default=5000, ge=0, description="give up waiting for quiet after this long")
    long_request_ms: int = Field(
        default=3000,
        ge=0,
        description="a request pending longer than this (a long poll, a stream) no longer delays settling",
    )
    observe_idle_ms: int = Field(
        default=300, ge=0, description="an observed (unreported) burst of events ends after this long without events"
    )
    redact_params: list[str] = Field(default_factory=lambda: list(DEFAULT_REDACT_PARAMS))
    redact_headers: list[str] = Field(default_factory=lambda: list(DEFAULT_REDACT_HEADERS))
    record_text: bool = Field(default=True, description="store each step's visible text in the WARC")
    dom_snapshot: bool = Field(
        default=True,
        description="store each step's live DOM (HTML with current form values, shadow roots, frames) in the WARC",
    )
    body_timeout_ms: int = Field(
        default=10000,
        ge=0,
        description=(
            "give up on a response body once nothing of it arrived for this long before it finished (a stream that"
            " stalls), not counting time its page's renderer was too busy to pass bytes on: it is archived as missing"
        ),
    )
    max_body_bytes: int = Field(default=20_000_000, ge=0, description="truncate archived bodies beyond this")
    fsync: bool = Field(default=True, description="fsync trajectory.jsonl after every step (on a background thread)")

    @model_validator(mode="after")
    def _dom_images_need_dom(self) -> RecorderOptions:
        if self.screenshot_source == "dom" and self.screenshots != "off" and not self.dom_snapshot:
            raise ValueError("screenshot_source 'dom' renders step images from DOM snapshots: it needs dom_snapshot")
        return self
