"""What the replayed pages asked for, and how the archive answered each request, by page (`rig qa`'s resources)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from playwright.async_api import BrowserContext, Request, Response

from replay.index import Exchange
from replay.qa import RequestOutcome

#: The recorded exchanges answering a request (method, URL, body, content type): what its status is compared with.
Recorded = Callable[[str, str, bytes | None, str | None], list[Exchange]]


class RequestLog:
    """Every http(s) request of a replay context, filed under the page being scored when it was sent (`tag()`):
    answered as recorded (`good`), not in the archive (`missed`, the replay's 404), held with a body not whole
    (`incomplete`, its 502), or answered with another status than the recording's (`status`)."""

    def __init__(self, context: BrowserContext, recorded: Recorded, tag: Callable[[], Any]) -> None:
        self._recorded, self._tag = recorded, tag
        self._tags: dict[Request, Any] = {}
        self.counts: Counter[Any] = Counter()
        self.outcomes: defaultdict[Any, list[RequestOutcome]] = defaultdict(list)
        context.on("request", self._on_request)
        context.on("response", self._on_response)
        context.on("requestfailed", self._on_failed)

    def _on_request(self, request: Request) -> None:
        if request.url.startswith(("http://", "https://")):
            tag = self._tag()
            self._tags[request] = tag
            self.counts[tag] += 1

    def _recorded_for(self, request: Request) -> list[Exchange]:
        ctype = request.headers.get("content-type")
        return self._recorded(request.method, request.url, request.post_data_buffer, ctype)

    def _on_response(self, response: Response) -> None:
        request = response.request
        if request not in self._tags:
            return
        tag = self._tags.pop(request)
        how = response.headers.get("x-replay")
        kind, status = request.resource_type, response.status
        if how == "miss":
            outcome = RequestOutcome(request.method, request.url, kind, "missed", status, reason="not in the archive")
        elif how in ("truncated", "missing"):
            outcome = RequestOutcome(request.method, request.url, kind, "incomplete", status,
                                     reason=f"its body was recorded {'cut' if how == 'truncated' else 'missing'}")
        else:
            recorded = [x.response.status for x in self._recorded_for(request) if x.response is not None]
            # a recorded redirect is followed inside the archive: its final answer has another status
            if recorded and status not in recorded and not any(300 <= s < 400 for s in recorded) and how != "redirect":
                outcome = RequestOutcome(request.method, request.url, kind, "status", status, recorded[0],
                                         reason=f"recorded {recorded[0]}, replayed {status}")
            else:
                outcome = RequestOutcome(request.method, request.url, kind, "good", status)
        self.outcomes[tag].append(outcome)

    def _on_failed(self, request: Request) -> None:
        """A request that failed: as recorded when the recording's failed too (the route aborts it); else the page
        went on without it (a navigation ended it), which is not the archive's doing."""
        tag = self._tags.pop(request, None)
        if tag is not None and any(x.response is None for x in self._recorded_for(request)):
            self.outcomes[tag].append(RequestOutcome(request.method, request.url, request.resource_type, "good"))
