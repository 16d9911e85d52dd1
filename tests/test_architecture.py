"""The import picture stays one-way (docs/architecture.md): checked on the real tree, after importing it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rig", "recorders", "replay", "rigwarc")
#: Episode file names, each spelled in exactly one module of rig/ and recorders/ together.
EPISODE_FILES = ("episode.json", "trajectory.jsonl", "evidence.warc.gz", "answer.json", "grade.json", "audit.json",
                 "summary.json")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _imports(name: str) -> set[str]:
    """The modules of the four packages that `name` imports anywhere in its text (lazy imports included)."""
    path = MODULES[name]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = {f"{target}.{a.name}" for a in node.names} & set(MODULES)
            out |= subs or {target}
    return {m for m in out if m in MODULES}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _light(layers: tuple[str, ...]) -> list[str]:
    return sorted(m for m in MODULES if any(_within(m, layer) for layer in layers))


def test_no_import_cycles():
    graph = {m: _imports(m) for m in MODULES}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycles.append(path[path.index(n):] + [n] if n in path else [m, n])
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m, [m])
    assert cycles == []


@pytest.mark.parametrize("lower,forbidden", [
    ("rigwarc", ("rig", "recorders", "replay")),
    ("recorders", ("rig", "replay")),
    ("replay", ("rig", "recorders")),
    ("rig.formats", ("rig.grading", "rig.agents", "rig.runner", "rig.report", "rig.browser", "rig.network", "rig.sites",
                     "rig.tasks")),
    ("rig.network", ("rig.grading", "rig.agents", "rig.runner", "rig.report", "rig.browser", "rig.sites")),
    ("rig.tasks", ("rig.grading", "rig.agents", "rig.runner", "rig.report")),
    ("rig.agents", ("rig.grading", "rig.runner", "rig.report")),
    ("rig.grading", ("rig.agents", "rig.runner", "rig.report", "rig.browser", "rig.network", "rig.sites")),
    # the report, comparisons and leaderboards read what grading wrote (formats, EpisodeDir); they never grade
    ("rig.report", ("rig.grading", "rig.tasks", "rig.agents", "rig.runner", "rig.browser", "rig.network", "rig.sites", "rig.tools")),
    ("rig.compare", ("rig.grading", "rig.tasks", "rig.agents", "rig.runner", "rig.report", "rig.browser", "rig.sites")),
    ("rig.leaderboard", ("rig.grading", "rig.tasks", "rig.agents", "rig.runner", "rig.report", "rig.browser",
                         "rig.sites")),
    ("rig.stats", ("rig", "recorders", "replay")),
    ("rig.runner", ("rig.grading", "rig.report", "rig.drift")),
    ("rig.drift", ("rig.grading", "rig.report", "rig.agents")),
])
def test_imports_run_one_way(lower, forbidden):
    bad = [f"{m} imports {t}" for m in _light((lower,)) for t in _imports(m) if any(_within(t, f) for f in forbidden)]
    assert bad == []


def test_commands_are_the_top_layer():
    """Only the CLI and the command modules import a command module: every layer's work is below them."""
    bad = [f"{m} imports {t}" for m in MODULES if not (_within(m, "rig.commands") or m == "rig.cli")
           for t in _imports(m) if _within(t, "rig.commands")]
    assert bad == []


def test_the_cli_only_dispatches():
    """`rig.cli` parses and dispatches: it imports no layer (the command modules are loaded by name), and every name
    it dispatches to is a command module's function or sub-app."""
    import importlib

    from rig.cli import COMMANDS

    assert _imports("rig.cli") <= {"rig.errors", "rig.log", "rig.commands.console"}
    for name, target in COMMANDS.items():
        module, attr = target.split(":")
        assert callable(getattr(importlib.import_module(f"rig.commands.{module}"), attr)), name


def test_no_browser_library_below_the_runner():
    """Importing every module of the formats, tasks, grading and report layers loads no playwright."""
    code = ("import importlib, sys\n"
            f"for m in {_light(('rig.formats', 'rig.tasks', 'rig.grading', 'rig.report', 'rig.episode_dir'))!r}:\n"
            "    importlib.import_module(m)\n"
            "import recorders, recorders.models, recorders.trajectory, replay, replay.index, replay.report\n"
            f"for m in {_light(('rigwarc',))!r}:\n"
            "    importlib.import_module(m)\n"
            "print(sorted(k for k in sys.modules if k.split('.')[0] == 'playwright'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_warc_dialect_has_one_home():
    """The rig's WARC header names and its redaction marker are spelled only in rigwarc (recorders and replay name them
    through it), and only rigwarc builds or parses records with warcio."""
    names = ("WARC-Rig-Step", "WARC-Rig-Capture", "WARC-Rig-Missing", "WARC-Rig-View", "WARC-Truncated", "[redacted]")
    spelled, warcio = set(), set()
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names:
                spelled.add(m)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("warcio.warcwriter",
                                                                                      "warcio.archiveiterator",
                                                                                      "warcio.recordbuilder")):
                warcio.add(m)
    assert sorted(spelled) == ["rigwarc.dialect"]
    assert all(_within(m, "rigwarc") for m in warcio), sorted(warcio)


def test_each_episode_file_name_is_spelled_once():
    where: dict[str, set[str]] = {}
    for m, path in MODULES.items():
        if _within(m, "replay"):
            continue  # replay reads the recorder's format on its own and names files only in messages
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in EPISODE_FILES:
                where.setdefault(node.value, set()).add(m)
    assert {name: sorted(ms) for name, ms in where.items() if len(ms) > 1} == {}
