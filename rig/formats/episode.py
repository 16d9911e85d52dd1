"""The episode directory's `episode.json`: who ran what, with which versions, and how it ended."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from recorders.models import RecordingTime
from rig import __version__
from rig.formats.usage import Usage

Status = Literal["incomplete", "ok", "timeout", "agent_error", "infra_error", "parse_failure", "site_unreachable"]


class Versions(BaseModel):
    """Software versions an episode ran with."""

    rig: str = __version__
    python: str = Field(default_factory=platform.python_version)
    playwright: str | None = None
    chromium: str | None = Field(default=None, description="the running browser's own version")
    browser_use: str | None = Field(default=None, description="browser-use's version, for browser-use episodes")


class PolitenessRecord(BaseModel):
    """What a live run's politeness did in one episode (rig.network.politeness): the limits it kept and how often it
    held requests back or backed off."""

    rate_per_host: float = Field(description="requests a second each host was sent at most (0: no rate limit)")
    burst: int = Field(description="requests a host could take at once before the rate limit applied")
    max_per_host: int = Field(description="requests in flight to one host at most (0: no cap)")
    user_agent: str | None = Field(default=None, description="the user agent the browser sent (the rig's suffix added)")
    requests: int = Field(default=0, description="http(s) requests that went through the gate")
    redirect_hops: int = Field(default=0, description="of those, redirect hops: accounted against their host (a token, "
                                                      "a slot) as the browser sent them, never held back")
    delayed: int = Field(default=0, description="requests held back by the rate limit, the cap or a backoff")
    waited_s: float = Field(default=0.0, description="seconds those requests were held back, in total")
    max_in_flight: dict[str, int] = Field(default_factory=dict, description="host -> most requests in flight at once")
    backoffs: int = Field(default=0, description="429/503 answers, after each of which the host got a pause")
    backoff_hosts: dict[str, int] = Field(default_factory=dict, description="host -> its 429/503 answers")
    retries: int = Field(default=0, description="the rig's own navigations (start page, operator captures) sent "
                                                "again after a 429/503")


class BlockedRequest(BaseModel):
    """One request the run's network rules refused (rig.network): where it went, how it got there, and why."""

    url: str = Field(description="the refused URL (redacted)")
    chain: list[str] = Field(default_factory=list, description="how the browser got there, first URL first, the refused "
                             "one last: the page a navigation left, then every hop of its redirect chain (HTTP 3xx)")
    reason: str = Field(description="why it was refused (not on the allow-list, loopback closed to live runs, ...)")
    by: Literal["browser", "proxy"] = Field(description="browser: aborted by the context's routes before it left the "
                                            "browser; proxy: refused by the context's proxy (a redirect hop, or a "
                                            "request the routes never saw), never connected")


class Episode(BaseModel):
    """`episode.json`. Written with status `incomplete` when an episode starts, rewritten when it ends;
    an episode killed mid-way stays `incomplete`. `infra_error` is never scored as the agent's zero;
    `site_unreachable` (a live start page that did not load within the budget) is scored as a failure of the task."""

    model_config = ConfigDict(extra="allow")

    format: Literal["sgr-rig/episode/1"] = "sgr-rig/episode/1"
    task_id: str | None = None
    task_path: str | None = Field(default=None, description="the task file, when the task is not a bundled one")
    variant: Literal["constraint", "goal"] | None = None
    agent: str
    model: str | None = None
    trial: int = 0
    prompt: str | None = None
    start_url: str | None = None
    sites_url: str | None = Field(default=None, description="where the rig served its bundled sites for the task "
                                  "(its sites server): `rig freeze` moves that origin onto the frozen one")
    task_revision: str | None = Field(default=None, description="the task's revision when the episode ran (its "
                                      "`revision`, else a digest of its gold and grading rules): grading compares it")
    versions: Versions = Field(default_factory=Versions)
    started_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    ended_at: datetime | None = None
    seconds: float | None = None
    status: Status = "incomplete"
    error: str | None = None
    steps: int | None = None
    recording: RecordingTime | None = Field(default=None, description="how long the recorder held the agent up")
    missing_bodies: int | None = Field(default=None, description="responses archived without their body (the WARC "
                                       "record says why); that evidence is missing, never an empty page")
    attempts: int = Field(default=1, description="attempts this episode took: each earlier one failed for "
                          "infrastructure reasons and is kept under attempts/<n>/")
    usage: Usage | None = Field(default=None, description="tokens, cost and effort of the attempt recorded here "
                                "(null: not recorded; each field null when unknown, never 0)")
    injected_fault: str | None = Field(default=None, description="ground truth of a perturbed:KIND agent")
    frozen: str | None = Field(default=None, description="the site snapshots a frozen run was answered from")
    replay_misses: int | None = Field(default=None, description="requests a frozen snapshot could not answer (404)")
    allowed_hosts: list[str] | None = Field(default=None, description="the host allow-list of a live run, if any")
    blocked_requests: int | None = Field(default=None, description="requests refused by the run's network rules (the "
                                         "allow-list, loopback closed to live runs), redirect hops included")
    blocked_urls: list[str] | None = Field(default=None, description="the first blocked URLs (redacted)")
    blocked: list[BlockedRequest] | None = Field(default=None, description="the first blocked requests, each with its "
                                                 "redirect chain and the reason")
    refused_connections: int | None = Field(default=None, description="connections the context's proxy refused, "
                                            "those the browser reported no request for (a preconnect, a favicon) too")
    dialogs: list[dict[str, Any]] = Field(default_factory=list, description="alert/confirm/prompt dialogs (first 20)")
    dialog_count: int = 0
    tabs: list[dict[str, Any]] = Field(default_factory=list, description="popups and new tabs, with their opener")
    tab_count: int = 0
    downloads: list[dict[str, Any]] = Field(default_factory=list, description="downloads saved under downloads/")
    download_count: int = 0
    start_hidden: bool = Field(default=False, description="the agent started on a blank page, the task's start page "
                                                          "not named in its prompt")
    live: bool = Field(default=False, description="the browser could reach the network (`--live`)")
    resolve: list[str] = Field(default_factory=list, description="host mappings in force (`--resolve HOST=ADDR:PORT`)")
    ignore_https_errors: bool = Field(default=False, description="certificate errors were accepted")
    politeness: PolitenessRecord | None = Field(default=None, description="what a live run's politeness did")
    ray_node: str | None = Field(default=None, description="the Ray node that ran the episode (`--executor ray`): its "
                                 "id and address, `<node id>@<address>`")

    def finish(self, status: Status, error: str | None = None, steps: int | None = None) -> None:
        """Mark the episode ended with a status."""
        self.ended_at = datetime.now(timezone.utc)
        self.seconds = round((self.ended_at - self.started_at).total_seconds(), 3)
        self.status, self.error, self.steps = status, error, steps
