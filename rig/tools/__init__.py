"""The tool server's tools: the registry declaring each once (`registry`, `tool`), the session protocol they work on
(`session`), and their data side as pure functions: read-only, bounded SQL (`sql`, the one SQL runner, which grading
shares), PDF text (`pdf`), knowledge catalogs (`knowledge`), web search (`search`), finding a task's database
(`databases`) and answer limits (`answers`). Nothing here imports a browser library, agents or grading
(docs/tools.md)."""
