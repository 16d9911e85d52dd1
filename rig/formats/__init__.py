"""Every file format the rig reads or writes, one pydantic model (or model family) per module.

| module | format |
|---|---|
| `task` | task files (YAML) |
| `actions` | action scripts (YAML/JSON) |
| `answer` | `answer.json`: answer table, citations, evidence records |
| `answer_text` | answer tables written as text (Markdown, pipe, TSV, CSV, JSON) read into an `Answer` |
| `canonical` | canonicalisation rules for answer cells |
| `records` | key hierarchies and evidence-record verdicts (WANDR) |
| `episode` | `episode.json` |
| `grade` | `grade.json` |
| `summary` | `summary.json` |
| `compare` | `rig compare --json` |
| `leaderboard` | `rig export --leaderboard` files |
| `vocabulary` | shared vocabularies: failure categories, column-name and text normal forms |
| `audit` | `audit.json` |
| `qa` | `qa.json` and `rig qa --json`: replay fidelity per page |
| `schemas` | JSON Schemas of all of them, generated into `docs/schemas/` |

Formats import nothing of grading, agents, runner or browsers: they are the bottom layer of `rig`.
"""
