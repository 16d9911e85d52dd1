"""The episode directory and the runs directory: every path and file name, typed atomic reads and writes.

    RUNS_DIR/summary.json, summary.md, run.log
    RUNS_DIR/<task>/<variant>/<agent>/trial-<n>/     an episode directory:
        episode.json        who ran what, how it ended (rig.formats.episode; written by the runner)
        trajectory.jsonl    one retrieval state a line (written by the recorder)
        evidence.warc.gz    every exchange and each step's page text (written by the recorder)
        screens/            one JPEG a step (written by the recorder)
        answer.json         the agent's answer (rig.formats.answer; written by the runner or `rig submit`)
        submitted_answer.txt, answer_parse_failure.json   what `rig submit` was given, and why it held no table
        prompt.md, operator_answer.md   the prompt shown to an outside driver, and an operator's pasted answer
        agent_output.log    what a `cli` agent's command wrote on stdout and stderr
        agent_usage.json    what a `cli` or `mcp` agent reported of its own LLM use (RIG_USAGE_FILE; written by it)
        downloads/          files the pages downloaded
        grade.json          the grader's verdict (rig.formats.grade; written by `rig grade`)
        audit.json          an auditor's label (rig.formats.audit; written by `rig view`)
        attempts/<n>/       the files of an attempt that failed for infrastructure reasons, kept as they were

No other module spells these names: each file has one writer, and every reader goes through here.
"""

from __future__ import annotations

import json
import os
import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from recorders.errors import TrajectoryError
from recorders.files import SCREENS_DIR, TRAJECTORY_FILE, WARC_FILE
from recorders.models import Step
from recorders.trajectory import read_trajectory
from replay.errors import ReplayError
from replay.index import ArchiveIndex, load_index
from rig.errors import InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure, ParseFailureRecord, parse_table
from rig.formats.audit import Audit
from rig.formats.episode import Episode
from rig.formats.files import read_limited
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.formats.usage import AgentUsageReport
from rigwarc.atomic import atomic_write as write_atomic  # the one atomic writer, by the name rig imports

EPISODE_FILE = "episode.json"
ANSWER_FILE = "answer.json"
GRADE_FILE = "grade.json"
AUDIT_FILE = "audit.json"
SUBMITTED_FILE = "submitted_answer.txt"
PARSE_FAILURE_FILE = "answer_parse_failure.json"
PROMPT_FILE = "prompt.md"
OPERATOR_ANSWER_FILE = "operator_answer.md"
AGENT_LOG_FILE = "agent_output.log"
AGENT_USAGE_FILE = "agent_usage.json"
ATTEMPTS_DIR = "attempts"
DOWNLOADS_DIR = "downloads"
SUMMARY_FILE = "summary.json"
SUMMARY_MD = "summary.md"
RUN_LOG = "run.log"
REFERENCE_AGENT = "reference"

_M = TypeVar("_M", bound=BaseModel)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _write_model(path: Path, model: BaseModel) -> Path:
    return write_atomic(path, model.model_dump_json(indent=2) + "\n")


def _read_model(path: Path, model: type[_M], what: str) -> _M:
    """A JSON file read into its model; InputError naming the file, the field and the reason."""
    data = read_limited(path, what)
    try:
        return model.model_validate_json(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or None
        raise InputError(str(path), where, f"not a valid {what}: {err['msg']}") from None


def slug(text: str, identity: str = "") -> str:
    """A file-name-safe form of an agent name (`scripted:runs/x.yaml` -> `scripted_x`), followed by what tells this
    agent from others of the same name (`identity`: a script's digest, the model), if any."""
    kind, _, arg = text.partition(":")
    if arg and kind == "scripted":
        arg = Path(arg).stem
    out = _UNSAFE.sub("_", f"{kind}_{arg}" if arg else kind).strip("._")
    if not out:
        raise InputError(text, None, "cannot make a directory name of this agent name")
    extra = _UNSAFE.sub("_", identity).strip("._")
    return f"{out}-{extra}" if extra else out


class EpisodeDir:
    """One episode's directory: where each file lives, and reading and writing them."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"EpisodeDir({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EpisodeDir) and self.path.resolve() == other.path.resolve()

    def __hash__(self) -> int:
        return hash(self.path.resolve())

    # paths
    @property
    def episode_file(self) -> Path:
        """`episode.json`."""
        return self.path / EPISODE_FILE

    @property
    def answer_file(self) -> Path:
        """`answer.json`."""
        return self.path / ANSWER_FILE

    @property
    def grade_file(self) -> Path:
        """`grade.json`."""
        return self.path / GRADE_FILE

    @property
    def audit_file(self) -> Path:
        """`audit.json`."""
        return self.path / AUDIT_FILE

    @property
    def trajectory_file(self) -> Path:
        """`trajectory.jsonl` (the recorder's)."""
        return self.path / TRAJECTORY_FILE

    @property
    def warc_file(self) -> Path:
        """`evidence.warc.gz` (the recorder's)."""
        return self.path / WARC_FILE

    @property
    def screens_dir(self) -> Path:
        """`screens/` (the recorder's)."""
        return self.path / SCREENS_DIR

    @property
    def downloads_dir(self) -> Path:
        """`downloads/`: files the pages downloaded."""
        return self.path / DOWNLOADS_DIR

    @property
    def prompt_file(self) -> Path:
        """`prompt.md`: the prompt shown to an outside driver or operator."""
        return self.path / PROMPT_FILE

    @property
    def operator_answer_file(self) -> Path:
        """`operator_answer.md`: a product's answer as the operator pasted or gave it."""
        return self.path / OPERATOR_ANSWER_FILE

    @property
    def agent_log_file(self) -> Path:
        """`agent_output.log`: a `cli` agent's command's stdout and stderr."""
        return self.path / AGENT_LOG_FILE

    @property
    def agent_usage_file(self) -> Path:
        """`agent_usage.json`: a `cli` or `mcp` agent's own report of its LLM use (the command's RIG_USAGE_FILE)."""
        return self.path / AGENT_USAGE_FILE

    def read_agent_usage(self) -> AgentUsageReport | None:
        """The agent's usage report, if it wrote one; InputError naming the file, the field and the reason."""
        if not self.agent_usage_file.exists():
            return None
        return _read_model(self.agent_usage_file, AgentUsageReport, AGENT_USAGE_FILE)

    @property
    def submitted_file(self) -> Path:
        """`submitted_answer.txt`: the text `rig submit` was given."""
        return self.path / SUBMITTED_FILE

    @property
    def parse_failure_file(self) -> Path:
        """`answer_parse_failure.json`: why a handed-in text held no answer table."""
        return self.path / PARSE_FAILURE_FILE

    def exists(self) -> bool:
        """Whether the directory holds an episode (its `episode.json`)."""
        return self.episode_file.is_file()

    # episode.json
    def read_episode(self) -> Episode:
        """`episode.json`; InputError when it is missing or invalid."""
        return _read_model(self.episode_file, Episode, EPISODE_FILE)

    def write_episode(self, episode: Episode) -> Path:
        """Write `episode.json` atomically."""
        return _write_model(self.episode_file, episode)

    # answer.json and the hand-in files
    def has_answer(self) -> bool:
        """Whether an answer (or an unparseable hand-in) is there."""
        return self.answer_file.exists() or self.parse_failure_file.exists()

    def read_answer(self) -> Answer:
        """`answer.json` as an Answer; ParseFailure when it holds none."""
        return read_answer_file(self.answer_file)

    def write_answer(self, answer: Answer) -> Path:
        """Write `answer.json` atomically."""
        return write_atomic(self.answer_file, json.dumps(answer.model_dump(exclude_none=True), indent=2,
                                                         ensure_ascii=False) + "\n")

    def write_submitted(self, text: str) -> Path:
        """Keep the text `rig submit` was given."""
        return write_atomic(self.submitted_file, text)

    def write_parse_failure(self, failure: ParseFailure) -> Path:
        """Record that the handed-in text held no answer table."""
        return _write_model(self.parse_failure_file, ParseFailureRecord(source=failure.source, reason=failure.reason))

    def read_parse_failure(self) -> ParseFailure | None:
        """The recorded parse failure of a hand-in, if any."""
        if not self.parse_failure_file.exists():
            return None
        rec = _read_model(self.parse_failure_file, ParseFailureRecord, PARSE_FAILURE_FILE)
        return ParseFailure(rec.source, rec.reason)

    # grade.json, audit.json
    def read_grade(self) -> Grade:
        """`grade.json`; InputError when it is missing or invalid."""
        return _read_model(self.grade_file, Grade, GRADE_FILE)

    def write_grade(self, grade: Grade) -> Path:
        """Write `grade.json` atomically."""
        return _write_model(self.grade_file, grade)

    def read_audit(self) -> Audit | None:
        """The episode's audit, or None when it has not been audited; InputError when `audit.json` is invalid."""
        return _read_model(self.audit_file, Audit, "audit file") if self.audit_file.exists() else None

    def write_audit(self, audit: Audit) -> Path:
        """Write `audit.json` atomically."""
        return _write_model(self.audit_file, audit)

    # the recorder's files
    def steps(self) -> list[Step]:
        """Every complete trajectory step (none when there is no trajectory); InputError naming a bad line."""
        if not self.trajectory_file.exists():
            return []
        try:
            return read_trajectory(self.trajectory_file)
        except TrajectoryError as e:
            raise InputError(e.path, e.where, e.reason) from None

    def archive(self, *, strict: bool = True) -> ArchiveIndex:
        """The evidence archive read once, page texts and bodies included (empty when there is none).

        InputError when it is not a WARC, and (`strict`) when a record in its middle is not one: evidence past
        that point is lost, so nothing should be judged on the rest. A torn last record (a killed recording)
        is left out; such problems are in `.errors`.
        """
        warc = self.warc_file
        if not warc.exists():
            return ArchiveIndex.empty()
        try:
            index = load_index(warc, texts=True)
        except ReplayError as e:
            raise InputError(str(warc), "byte 0", str(e).removeprefix(f"{warc}: ")) from None
        if strict and index.stopped is not None:
            at, why = index.stopped
            raise InputError(str(warc), f"byte {at}", f"not a WARC record ({why}); check it with `warcio check {warc}`")
        return index

    def step_texts(self, steps: list[Step] | None = None) -> dict[int, str]:
        """The page text captured at each step (`steps`: the trajectory's when not given), by step number; a step
        without a text record is left out."""
        steps = self.steps() if steps is None else steps
        return step_texts(self.archive(), steps) if steps else {}

    def evidence_gaps(self) -> list[str]:
        """What is missing of the recorder's evidence: no or an empty trajectory or archive (none: nothing)."""
        gaps = []
        for path in (self.trajectory_file, self.warc_file):
            if not path.is_file():
                gaps.append(f"no {path.name}")
            elif path.stat().st_size == 0:
                gaps.append(f"{path.name} is empty")
        return gaps

    def grading_inputs(self) -> dict[str, os.stat_result]:
        """The files a grade of this episode is computed from, by name: every file of the directory but what the
        grader and the auditor write (`grade.json`, `audit.json`) and temporary files (sub-directories are not read)."""
        out: dict[str, os.stat_result] = {}
        try:
            entries = list(os.scandir(self.path))
        except FileNotFoundError:
            return out
        for entry in entries:
            if entry.name in (GRADE_FILE, AUDIT_FILE) or entry.name.startswith("."):
                continue
            try:
                if entry.is_file():
                    out[entry.name] = entry.stat()
            except FileNotFoundError:  # removed meanwhile
                continue
        return out

    # attempts and references
    def attempts(self) -> list[EpisodeDir]:
        """Earlier attempts kept under `attempts/<n>/`, in order."""
        root = self.path / ATTEMPTS_DIR
        found = [p for p in root.iterdir() if p.is_dir() and p.name.isdigit()] if root.is_dir() else []
        return [EpisodeDir(p) for p in sorted(found, key=lambda p: int(p.name))]

    def is_empty(self) -> bool:
        """Whether the directory is missing or holds nothing."""
        return not self.path.exists() or not any(self.path.iterdir())

    def set_aside(self) -> EpisodeDir | None:
        """Move what an unfinished earlier run left here (its failed attempts included) under
        `attempts/unfinished-<n>/`, kept and never appended to, so that the episode starts afresh; None when there
        was nothing."""
        root = self.path / ATTEMPTS_DIR
        children = [c for c in self.path.iterdir() if c.name != ATTEMPTS_DIR] if self.path.is_dir() else []
        attempts = self.attempts()
        if not children and not attempts:
            return None
        n = 1
        while (root / f"unfinished-{n}").exists():
            n += 1
        keep = root / f"unfinished-{n}"
        (keep / ATTEMPTS_DIR).mkdir(parents=True)
        for child in children:
            os.replace(child, keep / child.name)
        for attempt in attempts:
            os.replace(attempt.path, keep / ATTEMPTS_DIR / attempt.path.name)
        return EpisodeDir(keep)

    def keep_failed_attempt(self, n: int) -> EpisodeDir:
        """Move the files of a failed attempt under `attempts/<n>/`, so that nothing recorded is lost."""
        keep = self.path / ATTEMPTS_DIR / str(n)
        keep.mkdir(parents=True, exist_ok=True)
        for child in list(self.path.iterdir()):
            if child.name != ATTEMPTS_DIR:
                os.replace(child, keep / child.name)
        return EpisodeDir(keep)

    def reference(self, variant: str | None) -> EpisodeDir | None:
        """The reference agent's finished episode for the same task and `variant`, next to this one
        (`<variant>/reference/trial-<n>`, lowest trial first; never this episode itself)."""
        return next((ref for ref in self.references(variant) if ref != self), None)

    def references(self, variant: str | None) -> list[EpisodeDir]:
        """Every finished reference-agent episode for the same task and `variant` next to this one
        (`<variant>/reference/trial-<n>`, lowest trial first; this episode included if it is one)."""
        variant_dir = self.path.resolve().parent.parent
        if variant is None or variant_dir.name != variant:
            return []
        trials = [p for p in (variant_dir / REFERENCE_AGENT).glob("trial-*") if p.name[6:].isdigit()]
        found = []
        for trial in sorted(trials, key=lambda p: int(p.name[6:])):
            ref = EpisodeDir(trial)
            if not ref.exists():
                continue
            try:
                ep = ref.read_episode()
            except InputError:
                continue
            if ep.agent == REFERENCE_AGENT and ep.status == "ok":
                found.append(ref)
        return found


class ReadOnceEpisodeDir(EpisodeDir):
    """An episode directory read by a grading pass: episode.json, the trajectory and the archive are each parsed at
    most once however many checks (or other episodes' grades, for a reference episode) read them. For directories
    nothing writes to meanwhile; writing goes through as for any `EpisodeDir`."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._episode: Episode | None = None
        self._steps: list[Step] | None = None
        self._archive: dict[bool, ArchiveIndex] = {}

    def read_episode(self) -> Episode:
        """`episode.json`, parsed once."""
        if self._episode is None:
            self._episode = super().read_episode()
        return self._episode

    def steps(self) -> list[Step]:
        """Every complete trajectory step, parsed once."""
        if self._steps is None:
            self._steps = super().steps()
        return self._steps

    def archive(self, *, strict: bool = True) -> ArchiveIndex:
        """The evidence archive, read once."""
        if strict not in self._archive:
            self._archive[strict] = super().archive(strict=strict)
        return self._archive[strict]

    def forget_archive(self) -> None:
        """Drop the archive read (its bodies can be large) once no check needs it any more."""
        self._archive.clear()


def step_texts(archive: ArchiveIndex, steps: list[Step]) -> dict[int, str]:
    """Each step's captured page text in an archive, by step number: the text record the step names, else the one
    the archive files under its step number; a step with neither is left out (its text is missing)."""
    by_step = {n: archive.texts[rid] for n, rid in archive.text_ids.items() if rid in archive.texts}
    out = {}
    for s in steps:
        rid = s.snapshot.warc_record_id if s.snapshot else None
        text = archive.texts.get(rid) if rid else None
        if text is None:
            text = by_step.get(s.step)
        if text is not None:
            out[s.step] = text
    return out


def read_answer_file(path: Path) -> Answer:
    """An answer file (answer.json, or any answer-table text `rig score` reads); ParseFailure if it holds none."""
    raw = read_limited(path, "the answer")
    try:
        return parse_table(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError as e:
        raise ParseFailure(str(path), f"not UTF-8 text (byte {e.start})") from None
    except RecursionError:
        raise ParseFailure(str(path), "nested too deeply to be an answer") from None


class RunsDir:
    """A runs directory: episode directories under `<task>/<variant>/<agent>/trial-<n>`, and the run's summary."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def summary_file(self) -> Path:
        """`summary.json`."""
        return self.path / SUMMARY_FILE

    @property
    def summary_md(self) -> Path:
        """`summary.md`."""
        return self.path / SUMMARY_MD

    @property
    def log_file(self) -> Path:
        """`run.log`."""
        return self.path / RUN_LOG

    def episode(self, task_id: str, variant: str, agent: str, trial: int, identity: str = "") -> EpisodeDir:
        """The directory of one episode, always inside the runs directory (`identity`: see `slug`)."""
        path = self.path / task_id / variant / slug(agent, identity) / f"trial-{trial}"
        if self.path.resolve() not in path.resolve().parents:
            raise InputError(str(path), None, "an episode directory must stay inside the runs directory")
        return EpisodeDir(path)

    def trials(self, task_id: str, variant: str, agent: str, identity: str = "") -> list[int]:
        """The trial numbers that have a directory for (task, variant, agent)."""
        parent = self.episode(task_id, variant, agent, 0, identity).path.parent
        return sorted(int(p.name[6:]) for p in parent.glob("trial-*") if p.name[6:].isdigit()) if parent.is_dir() else []

    def episodes(self) -> list[EpisodeDir]:
        """Every episode directory below, sorted (failed attempts kept under `attempts/` are not episodes)."""
        return [EpisodeDir(p.parent) for p in sorted(self.path.rglob(EPISODE_FILE))
                if ATTEMPTS_DIR not in p.relative_to(self.path).parts[:-1]]

    def strays(self) -> list[Path]:
        """Directories that should be episodes and are not: a `trial-<n>` directory, or one holding a trajectory,
        an archive or an answer, without `episode.json` and not inside an episode directory, sorted."""
        found: set[Path] = set()
        episodes: set[Path] = set()  # directories holding an episode.json
        for top, dirs, files in os.walk(self.path):  # one walk (symlinked directories are named, not entered)
            here, names = Path(top), {*dirs, *files}
            if EPISODE_FILE in names:
                episodes.add(here)
            if names & {TRAJECTORY_FILE, WARC_FILE, ANSWER_FILE}:
                found.add(here)
            found |= {here / d for d in dirs if fnmatchcase(d, "trial-*")}

        def in_episode(d: Path) -> bool:
            return any(a in episodes for a in [d, *d.parents] if a == self.path or self.path in a.parents)

        return sorted(d for d in found if not in_episode(d))

    def read_summary(self) -> Summary:
        """`summary.json`; InputError when it is missing or invalid."""
        return _read_model(self.summary_file, Summary, SUMMARY_FILE)

    def write_summary(self, summary: Summary, markdown: str) -> None:
        """Write `summary.json` and `summary.md` atomically."""
        _write_model(self.summary_file, summary)
        write_atomic(self.summary_md, markdown)


def find_episodes(paths: list[Path], command: str) -> list[EpisodeDir]:
    """The episode directories named on `command`'s line: each path is one episode directory or a runs directory
    of them."""
    if not paths:
        raise InputError(command, None, "name at least one runs or episode directory")
    found: list[EpisodeDir] = []
    for path in paths:
        if not path.is_dir():
            raise InputError(str(path), None, "no such runs or episode directory")
        ed = EpisodeDir(path)
        episodes = [ed] if ed.episode_file.is_file() else RunsDir(path).episodes()
        if not episodes:
            raise InputError(str(path), None, "holds no episode (no episode.json in it or below it)")
        found += [e for e in episodes if e not in found]
    return found
