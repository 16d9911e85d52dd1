"""Scoring a snapshot's archived documents: each HTML page it holds opened on its own in an archive-only context and
captured by the recorder; compared with a recorded page of it when an episode frozen into the snapshot loaded it."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urldefrag, urlsplit, urlunsplit

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from recorders import WARC_FILE, Recorder, Step
from replay import FROZEN_ORIGIN, REPLAY_CONTEXT_OPTIONS, FrozenSite, load_index
from replay.index import ArchiveIndex
from rig.qa.capture import Seen, replay_options, seen_of
from rig.qa.overlays import hide_unrecorded_overlays
from rig.qa.pages import Scored, score_page
from rig.qa.requests import RequestLog
from rig.sites import bundled_adapters

#: Recorded actions that load a document: the step right after one shows the page as a visit to its URL does.
LOADS = frozenset({"goto", "navigate", "load", "reload"})


def document_urls(index: ArchiveIndex) -> list[str]:
    """The URLs of the snapshot's HTML documents (GET, 2xx; those held with a body cut or missing too, which replay
    answers with a 502), once each, in recorded order; a snapshot whose rules ignore origins (a bundled site's) has
    them on `FROZEN_ORIGIN`, where frozen runs put it."""
    seen, out = set(), []
    on_frozen = index.keys.rules.ignore_origin
    for x in sorted([*index.all(), *index.unanswered()], key=lambda x: x.order):
        r = x.response
        if x.method != "GET" or r is None or not 200 <= r.status < 300 or "text/html" not in r.content_type:
            continue
        url = urldefrag(x.url).url
        if on_frozen:
            parts, to = urlsplit(url), urlsplit(FROZEN_ORIGIN)
            url = urlunsplit((to.scheme, to.netloc, parts.path, parts.query, ""))
        key = index.key("GET", url)
        if key not in seen:
            seen.add(key)
            out.append(url)
    return out


def reference_pages(steps: list[tuple[Step, Seen]]) -> dict[str, Seen]:
    """Recorded pages of documents, by URL (fragment dropped): the first step right after each load."""
    out: dict[str, Seen] = {}
    for step, seen in steps:
        if step.action.type in LOADS:
            out.setdefault(urldefrag(seen.url).url, seen)
    return out


async def score_documents(browser: Browser, frozen: FrozenSite, source: str, references: Mapping[str, Seen], *,
                          threshold: float, timeout_s: float = 10.0) -> list[Scored]:
    """Open every archived document of the snapshot, in recorded order, and score it: against its recorded page
    where `references` has one (text, image, state), else on its requests alone."""
    urls = document_urls(frozen.index)
    if not urls:
        return []
    images = any(ref.image is not None for ref in references.values())
    captured: dict[int, Step] = {}
    notes: dict[int, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="rig-qa-") as scratch_dir:
        scratch = Path(scratch_dir)
        context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
        try:
            session = await frozen.attach(context)
            log = RequestLog(context, frozen.index.lookup, lambda: session.tag)
            rec = await Recorder.attach(context, scratch, options=replay_options(images), adapters=bundled_adapters())
            page = await context.new_page()
            for n, url in enumerate(urls):
                session.tag, notes[n], before = n, [], rec.steps
                try:
                    async with rec.action({"type": "goto", "value": url, "page": page}):
                        await page.goto(url, timeout=timeout_s * 1000)
                    ref = references.get(url)
                    hidden = await hide_unrecorded_overlays(page, ref.text) if ref and ref.text is not None else []
                    if hidden:
                        await rec.checkpoint("qa: consent overlay hidden")
                        notes[n].append("consent overlay hidden (the recording did not show it): " + "; ".join(hidden))
                except PlaywrightError as exc:
                    notes[n].append(f"the page did not load: {str(exc).splitlines()[0]}")
                if rec.steps > before and rec.last_step is not None:
                    captured[n] = rec.last_step
            await rec.close()
        finally:
            await context.close()
        texts = load_index(scratch / WARC_FILE, texts=True).texts
        out = []
        for n, url in enumerate(urls):
            got = captured.get(n)
            out.append(score_page(url, None, references.get(url), seen_of(got, texts, scratch) if got else None,
                                  log.outcomes.get(n, []), log.counts.get(n, 0), kind="document",
                                  source=source, threshold=threshold, replay_index=frozen.index, notes=notes[n]))
        return out
