"""Loading and validating task files; errors name the file, the field and the reason."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from rig.errors import InputError, TaskError
from rig.formats.episode import Episode
from rig.formats.files import read_limited
from rig.formats.task import Task

_FIELD_MSG = re.compile(r"^([\w.\[\]]+): (.*)$", re.S)
#: A site name is one plain path segment (it names a directory of snapshots and the site's URL prefix).
SITE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
BUNDLED_DIR = Path(__file__).parent / "sgr_mini"
#: The bundled tool-server tasks (SGR-tools): discovery tasks and hybrid web+SQL tasks, for the `mcp` and `cli`
#: agents. They are not part of SGR-mini: `bundled_task_paths()` and `rig run --task all` leave them out.
TOOLS_DIR = Path(__file__).parent / "sgr_tools"
#: A task file is text a person writes: far below this.
MAX_TASK_BYTES = 8 * 1024 * 1024


def _parse_yaml(text: str) -> object:
    """YAML by libyaml where installed (several times faster); a document it refuses is parsed again by PyYAML's own
    parser, whose error messages say more."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.load(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def load_task(path: str | Path) -> Task:
    """Read one task file; raise TaskError naming the file, field and reason."""
    p = Path(path)
    raw = read_limited(p, "the task file", MAX_TASK_BYTES, TaskError)
    try:
        data = _parse_yaml(raw.decode("utf-8"))
    except RecursionError:
        raise TaskError(str(p), None, "not a task file: nested too deeply") from None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise TaskError(str(p), f"line {line}, byte {exc.start}", "not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        raise TaskError(str(p), where, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise TaskError(str(p), None, "a task file is a YAML mapping")
    try:
        task = Task.model_validate(data)
    except RecursionError:
        raise TaskError(str(p), None, "not a task file: nested too deeply") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or None
        msg = err["msg"].removeprefix("Value error, ")
        m = _FIELD_MSG.match(msg)
        if m:  # a check names its field first (see rig.formats.task)
            sub, msg = m.group(1), m.group(2)
            field = f"{field or ''}{sub}" if sub.startswith("[") else ".".join(filter(None, [field, sub]))
        raise TaskError(str(p), field, msg) from None
    if task.site is not None and not SITE_NAME.match(task.site):
        raise TaskError(str(p), "site", f"{task.site!r} is not a site name: one segment of lower-case letters, "
                                        "digits, '-' and '_' (no '/', no '..')")
    task._source = str(p.resolve())
    return task


def bundled_task_paths() -> list[Path]:
    """Paths of the bundled SGR-mini task files, sorted by name."""
    return sorted(BUNDLED_DIR.glob("*.yaml"))


def bundled_tasks() -> list[Task]:
    """All bundled SGR-mini tasks."""
    return [load_task(p) for p in bundled_task_paths()]


def tool_task_paths() -> list[Path]:
    """Paths of the bundled SGR-tools task files (discovery and hybrid tasks), sorted by name."""
    return sorted(TOOLS_DIR.glob("*.yaml"))


def tool_tasks() -> list[Task]:
    """All bundled SGR-tools tasks (discovery and hybrid tasks)."""
    return [load_task(p) for p in tool_task_paths()]


def all_bundled_task_paths() -> list[Path]:
    """Every bundled task file: SGR-mini, then SGR-tools."""
    return bundled_task_paths() + tool_task_paths()


def resolve_task(ref: str) -> Task:
    """A task by bundled id or by file path."""
    if ref.endswith((".yaml", ".yml")):
        return load_task(ref)
    if "/" in ref or "\\" in ref or ref.startswith("."):
        raise InputError(ref, None, "task ids cannot contain path separators; pass a file path to a .yaml task")
    for path in all_bundled_task_paths():
        if path.stem == ref:
            return load_task(path)
    raise InputError(ref, None, "no bundled task with this id (see `rig tasks list`)")


def task_file_of(episode: Episode, episode_dir: Path) -> Path | None:
    """An episode's task file, not loaded: `task_path` in episode.json if present (relative paths resolve against
    the working directory, then the episode directory), else the bundled task's file by id (None: no such task)."""
    if episode.task_path:
        p = Path(episode.task_path)
        return p if p.is_absolute() or p.exists() else Path(episode_dir) / p
    if episode.task_id is None:
        return None
    return next((p for p in all_bundled_task_paths() if p.stem == episode.task_id), None)


def task_of(episode: Episode, episode_dir: Path) -> tuple[Task, Path] | None:
    """An episode's task and its file (`task_file_of`), loaded."""
    p = task_file_of(episode, episode_dir)
    return (load_task(p), p) if p is not None else None


def task_sha256(path: Path) -> str:
    """Hex SHA-256 of a task file's bytes (which version of the task an episode was graded against)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
