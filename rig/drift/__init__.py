"""`rig drift`: does what was archived still hold on the live origin? Site drift, told apart from agent drift, in
stages:

- `plan`: every episode and snapshot under the paths given, loaded before any browser starts (bad input is an
  InputError there); episodes of the bundled sites and bundled-site snapshots are left out (`skipped`: re-drive those
  against their archive with `rig replay`);
- `live`: how the live origins are reached (certificate errors, the rig's user agent, politeness), and each origin
  probed once before anything of it is compared: an origin whose first request fails at DNS, TLS or connect is
  `unreachable`, and its items are not re-checked (that is no drift, and the command says how to reach it);
- `episodes`: an episode's recorded actions re-driven live with the machinery `rig replay` uses against the archive
  (`replay.redrive`, a scratch recording capturing each step's visible text), each step's text compared with the text
  the archive holds for it;
- `snapshots`: a snapshot's archived requests sent again: each HTML page rendered twice, from the snapshot and live,
  and the visible texts compared; each data response (JSON, CSV, text ...) fetched live from a page on its own origin
  and its body compared with the archived answers (any of them, for a request answered as a sequence); images,
  styles, scripts and fonts are not compared (the pages that use them are);
- `compare`: the comparisons themselves (text diffs, bodies as compared, when a page counts as gone);
- `check`: the whole check in one browser, giving a `rig.formats.drift.DriftReport`.

Each item is `unchanged`, `changed` (with a short unified diff), `gone` (an HTTP error or no answer where the archive
had a page, or a recorded action whose target is no longer there) or `unreachable`.
"""

from rig.drift.check import check_drift
from rig.drift.live import DriftOptions
from rig.drift.plan import plan_drift

__all__ = ["DriftOptions", "check_drift", "plan_drift"]
