"""Agents driven from outside the rig: `cdp` (any program over CDP) and `operator` (a person with a product)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from loguru import logger
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Response
from playwright.async_api import TimeoutError as PlaywrightTimeout

from recorders import Action
from rig.agents.base import EpisodeEnv
from rig.agents.cdp import announce, wait_for_answer
from rig.episode_dir import EpisodeDir, write_atomic
from rig.errors import AgentError, InputError
from rig.formats.answer import Answer, Citation
from rig.formats.answer_text import ParseFailure, parse_table
from rig.network.failures import failure_reason
from rig.network.politeness import polite_goto

#: How long the operator waits for one cited page.
CAPTURE_TIMEOUT_S = 30.0


def _save_prompt(env: EpisodeEnv) -> Path:
    return write_atomic(EpisodeDir(env.out_dir).prompt_file, env.prompt + "\n")


class CdpAgent:
    """Records whatever an outside program does over CDP until `rig submit` hands in the answer."""

    name, model, needs_cdp = "cdp", None, True

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Print the endpoint and the prompt, then wait for the answer (within the episode's budget)."""
        _save_prompt(env)
        out = env.console or sys.stdout
        announce(env.cdp_url or "", env.out_dir, out)
        out.write(f"Start URL: {env.start_url}\nPrompt:\n{env.prompt}\n"
                  f"Hand in the answer with: rig submit {env.out_dir} --answer FILE\n")
        out.flush()
        # the runner's own wall-clock budget ends a silent episode first, as `timeout`; this is a backstop
        answer = await wait_for_answer(env.out_dir, timeout_s=env.budget.timeout_s + 5)
        if answer is None:
            raise AgentError("no answer was submitted within the time budget")
        if isinstance(answer, ParseFailure):
            raise answer  # the runner ends the episode with status parse_failure
        return answer


@dataclass
class Capture:
    """What opening one cited URL gave: the status, the final URL and the redirects on the way, or why it failed."""

    reason: str | None = None
    status: int | None = None
    final_url: str | None = None
    redirects: list[str] = field(default_factory=list)

    def apply(self, citation: Citation) -> None:
        """Record this capture on a citation of its URL."""
        citation.captured, citation.capture_reason = self.reason is None, self.reason
        citation.capture_status, citation.final_url = self.status, self.final_url
        citation.redirects = list(self.redirects) if self.final_url is not None else None


def _redirects(response: Response) -> list[str]:
    """The URLs a response's request was redirected from, first one first."""
    chain, req = [], response.request.redirected_from
    while req is not None:
        chain.insert(0, req.url)
        req = req.redirected_from
    return chain


class OperatorAgent:
    """Semi-manual evaluation of a product with no trajectory API: takes its final answer (markdown with
    tables and links), snapshots every cited http(s) page into the episode's archive, and hands the answer in.

    Each citation records what its capture gave (`captured`, `capture_status`, `final_url`, `redirects`); the page's
    responses and visible text reach the WARC through the recorder like any step's. A pasted answer is untrusted: a
    citation of any other scheme (`file:`, `chrome:`, `data:`, ...) is never opened; it is kept, marked not captured
    with the reason, as is a page that could not be loaded (DNS, TLS, refused, timeout) or answered an HTTP error."""

    name, model, needs_cdp = "operator", None, False

    def __init__(self, answer_file: Path | None, capture_timeout_s: float = CAPTURE_TIMEOUT_S) -> None:
        if answer_file is not None and not Path(answer_file).is_file():
            raise InputError(str(answer_file), None, "answer file not found")
        self.answer_file = answer_file
        self.capture_timeout_s = capture_timeout_s

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Read the product's answer, parse it, capture each cited page."""
        prompt_path = _save_prompt(env)
        if self.answer_file is not None:
            text, source = Path(self.answer_file).read_text(encoding="utf-8"), str(self.answer_file)
        elif sys.stdin.isatty():
            sys.stderr.write(f"Prompt (also in {prompt_path}):\n{env.prompt}\n\n"
                             "Paste the product's final answer, then Ctrl-D:\n")
            text, source = sys.stdin.read(), "pasted answer"
        else:
            raise InputError("--answer-file", None, "the operator agent needs --answer-file when stdin is not a terminal")
        write_atomic(EpisodeDir(env.out_dir).operator_answer_file, text)
        answer = parse_table(text, source)  # ParseFailure -> status parse_failure
        outcome = {url: await self._capture(env, url) for url in dict.fromkeys(c.url for c in answer.citations)}
        for citation in answer.citations:
            outcome[citation.url].apply(citation)
        return answer

    async def _capture(self, env: EpisodeEnv, url: str) -> Capture:
        """Open a cited http(s) page in the recorded browser (politely, in a live run: retried after 429/503) so its
        responses and visible text reach the archive; what it gave."""
        target = urljoin(env.start_url, url)
        scheme = urlsplit(target).scheme.lower()
        if scheme not in ("http", "https"):
            logger.warning("operator: not opening cited URL {} (scheme {!r})", url, scheme)
            return Capture(f"not opened: only http(s) citations are captured, this one is {scheme or 'without a scheme'}")
        try:
            async with env.recorder.action(Action(type="goto", value=target), page=env.page):
                response = await polite_goto(env.page, target, env.politeness, env.politeness_record,
                                             timeout_ms=self.capture_timeout_s * 1000)
        except (PlaywrightError, PlaywrightTimeout) as exc:  # an unreachable citation is evidence too
            logger.warning("operator: could not capture cited page {}: {}", url, exc)
            guard = env.network_guard
            return Capture(failure_reason(exc, self.capture_timeout_s, guard.failure(target) if guard else None))
        if response is None:  # a same-document navigation (a fragment): the page is what it shows
            return Capture(final_url=env.page.url)
        capture = Capture(status=response.status, final_url=response.url, redirects=_redirects(response))
        if response.status >= 400:
            capture.reason = f"HTTP {response.status} {response.status_text}".rstrip()
        return capture
