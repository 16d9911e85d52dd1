"""`rig qa --out DIR`: one HTML page per snapshot or episode, showing each page under the threshold: its recorded and
replayed images side by side, the text diff, and the requests the archive failed."""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, select_autoescape

from rig.qa.pages import Scoring
from rigwarc.atomic import atomic_write

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Replay QA: {{ r.target }}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;max-width:1700px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
.low{background:#fee}.pair{display:flex;gap:1em}.pair figure{margin:0;flex:1 1 0;min-width:0;max-width:800px}
.pair img{width:100%;border:1px solid #999}pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:30em}
.del{color:#a00}.add{color:#070}
</style></head><body>
<h1>Replay QA of <code>{{ r.target }}</code></h1>
<p id="summary">{{ r.summary.pages }} pages, mean {{ fmt(r.summary.mean) }}, min {{ fmt(r.summary.min) }};
{{ r.summary.below | length }} below the threshold {{ r.summary.threshold }}.</p>
{% for n in r.notes %}<p class="note">{{ n }}</p>{% endfor %}
<table id="pages"><thead><tr><th>step</th><th>url</th><th>score</th><th>text</th><th>image</th><th>resources</th>
<th>state</th><th>worst</th></tr></thead><tbody>
{% for p in r.pages %}<tr class="{{ 'low' if p.score < r.summary.threshold }}"><td>{{ p.step if p.step is not none else "document" }}</td>
<td><a href="#page-{{ loop.index0 }}">{{ p.url }}</a></td><td>{{ fmt(p.score) }}</td><td>{{ fmt(p.text) }}</td>
<td>{{ fmt(p.image) }}</td><td>{{ fmt(p.resources) }}</td><td>{{ fmt(p.state) }}</td><td>{{ p.worst or "" }}</td></tr>
{% endfor %}</tbody></table>
{% for low in lows %}{% set p = low.page %}
<section id="page-{{ low.n }}" class="low-page">
<h2>{{ "step %d" % p.step if p.step is not none else "document" }}: <code>{{ p.url }}</code> — {{ fmt(p.score) }} ({{ p.worst }})</h2>
<p>{{ p.source }}</p>
{% if low.recorded or low.replayed %}<div class="pair">
<figure><figcaption>recorded</figcaption>{% if low.recorded %}<img alt="recorded page" src="{{ low.recorded }}">{% else %}<p>no image</p>{% endif %}</figure>
<figure><figcaption>replayed</figcaption>{% if low.replayed %}<img alt="replayed page" src="{{ low.replayed }}">{% else %}<p>no image</p>{% endif %}</figure>
</div>{% endif %}
{% if p.failed %}<h3>Requests the archive failed</h3><ul class="failed">
{% for f in p.failed %}<li>{{ f.outcome }}: {{ f.method }} <code>{{ f.url }}</code> ({{ f.kind }}{% if f.reason %}, {{ f.reason }}{% endif %}){% if f.fuzzy %}; a fuzzy rule ignoring {{ f.fuzzy | join(", ") }} would answer it{% endif %}</li>
{% endfor %}</ul>{% endif %}
{% if p.state_diff %}<h3>State</h3><ul>{% for k, v in p.state_diff.items() %}<li><code>{{ k }}</code>: {{ v[0] }} → {{ v[1] }}</li>{% endfor %}</ul>{% endif %}
{% if p.text_diff %}<h3>Text</h3><pre class="diff">{% for line in p.text_diff.splitlines() %}<span class="{{ 'del' if line.startswith('-') else 'add' if line.startswith('+') else '' }}">{{ line }}</span>
{% endfor %}</pre>{% endif %}
{% for n in p.notes %}<p class="note">{{ n }}</p>{% endfor %}
</section>
{% endfor %}
</body></html>
"""


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def page_name(target: str) -> str:
    """The HTML page's file name for a target directory: its path as one plain segment."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", target).strip("-.") or "qa"


def write_page(out: Path, scoring: Scoring) -> Path:
    """Write `out/<target>.html` and its images (`out/<target>/`); return the page's path."""
    r = scoring.report
    name = page_name(r.target)
    images = out / name
    lows = []
    for n, s in enumerate(scoring.pages):
        if s.page.score >= r.summary.threshold:
            continue
        low = {"n": n, "page": s.page, "recorded": None, "replayed": None}
        for side, seen in (("recorded", s.recorded), ("replayed", s.replayed)):
            if seen is not None and seen.image is not None:
                atomic_write(images / f"{n:04d}-{side}.jpg", seen.image)
                low[side] = f"{name}/{n:04d}-{side}.jpg"
        lows.append(low)
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    html = env.from_string(_PAGE).render(r=r, lows=lows, fmt=_fmt)
    out.mkdir(parents=True, exist_ok=True)
    return atomic_write(out / f"{name}.html", html)
