"""Consent and cookie overlays: recorded in one state (after the visitor accepted) and shown again in another (a
first visit to the same page, replayed on its own). A replayed page's overlay the recording did not show is hidden
before the page is captured, so a banner is not scored as the archive's loss."""

from __future__ import annotations

from playwright.async_api import Page

from replay.qa import normalise_text

#: Marks fixed, sticky or dialog elements whose names or text speak of cookies or consent; returns their texts.
_FIND = """() => {
  const words = /cookie|consent|gdpr|privacy|tracking/i;
  const found = [];
  for (const el of document.querySelectorAll('body *')) {
    const role = el.getAttribute('role');
    const cs = getComputedStyle(el);
    const overlay = cs.position === 'fixed' || cs.position === 'sticky' || el.tagName === 'DIALOG'
      || role === 'dialog' || role === 'alertdialog';
    if (!overlay || cs.display === 'none' || found.some(f => f.contains(el))) continue;
    const names = [el.id, String(el.className), el.getAttribute('aria-label') || '',
                   (el.innerText || '').slice(0, 400)];
    if (!words.test(names.join(' '))) continue;
    el.setAttribute('data-rig-qa-overlay', String(found.length));
    found.push(el);
  }
  return found.map(el => el.innerText || '');
}"""

_HIDE = """(chosen) => {
  for (const n of chosen) {
    const el = document.querySelector('[data-rig-qa-overlay="' + n + '"]');
    if (el) el.style.setProperty('display', 'none', 'important');
  }
}"""


async def hide_unrecorded_overlays(page: Page, recorded_text: str) -> list[str]:
    """Hide the page's consent overlays whose text the recorded text does not hold; their texts (none: nothing
    hidden)."""
    texts: list[str] = await page.evaluate(_FIND)
    recorded = normalise_text(recorded_text)
    chosen = [n for n, t in enumerate(texts) if normalise_text(t) and normalise_text(t) not in recorded]
    if chosen:
        await page.evaluate(_HIDE, chosen)
    return [normalise_text(texts[n])[:120] for n in chosen]
