"""`rig qa`: replay fidelity measured (docs/replay.md, "Replay QA"). The scoring itself is pure and lives in
`replay.qa`; this package drives the archive-only browser and the recorder, which `replay/` may not import:

| module | owns |
|---|---|
| `run` | what a path names (snapshot, runs, episode), the browser, `qa.json` per snapshot and episode |
| `episodes` | an episode's steps re-driven (`replay.redrive`) against its own archive or a snapshot, captured again |
| `documents` | a snapshot's archived HTML documents opened one by one |
| `capture` | both sides of a page as the recorder captured them |
| `requests` | how the archive answered each request of a replayed page |
| `overlays` | consent overlays a replayed page shows and its recording did not |
| `pages` | one page's parts and score (`replay.qa`) as a `QaPage` |
| `html` | `--out`: the low pages side by side |
| `fuzzy` | `rig freeze --fuzzy` rules |
| `stored` | a snapshot's `qa.json` read back for frozen runs (files only, no browser) |
"""
