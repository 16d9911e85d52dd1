"""Whether and when an agent found a hidden-start task's site (discovery tasks: the start page is not shown, the agent
must find the site, e.g. through `web_search`). A step counts when its page is on the site: under `/<site>/` for a
bundled site (on whatever origin served it), on one of the task's `origins` otherwise. A search result listing the
site does not count; opening it does."""

from __future__ import annotations

from urllib.parse import urlsplit

from recorders.models import Step
from rig.formats.task import Task


def on_site(task: Task, url: str) -> bool:
    """Whether `url` is a page of the task's site."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return False
    if task.origins:
        return (parts.hostname or "").lower() in {o.lower() for o in task.origins}
    if task.site is not None:
        return parts.path.startswith(f"/{task.site}/") or parts.path == f"/{task.site}"
    if task.start_url is not None:
        return parts.netloc.lower() == urlsplit(task.start_url).netloc.lower()
    return False


def site_found(task: Task, steps: list[Step]) -> tuple[bool | None, int | None]:
    """(found, first step on the site) for a hidden-start task; (None, None) when the task shows its start page."""
    if not task.start_hidden:
        return None, None
    step = next((s.step for s in steps if on_site(task, s.url)), None)
    return step is not None, step
