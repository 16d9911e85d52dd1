"""The data side of the tool server, as pure functions: read-only SQL (`sql`), PDF text (`pdf`), knowledge catalogs
(`knowledge`), web search (`search`) and the bundled databases (`databases`). Agents' tool handlers and the grader
call them; nothing here knows about browsers, agents or grading (docs/tools.md)."""
