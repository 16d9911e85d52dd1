"""The `rig` command as one app: every command module loads; the error tree maps to exit codes in one place (bad input
2, infrastructure 3, another rig error 1, Ctrl-C 130); errors keep their brackets (rich markup off); and Ctrl-C during
`rig run` says in one line what was left and how to resume, with no traceback, losing nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml
from typer.testing import CliRunner
from waiting import wait_until_sync

from rig.agents.registry import make_agent
from rig.cli import COMMANDS, app
from rig.episode_dir import EpisodeDir, RunsDir
from rig.formats.episode import Episode
from rig.runner.local import plan
from rig.runner.spec import agent_identity
from rig.tasks import resolve_task

RIG = Path(sys.executable).with_name("rig")
VALID_TASK = Path(__file__).parent / "data" / "tasks" / "valid.yaml"
PROSE = Path(__file__).parent / "data" / "broken" / "answer-prose.md"
#: A regex class that rich markup would eat, as issue 23 (item 7) saw it.
PATTERN = "[a-z0-9]+("


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_every_command_loads_and_has_help():
    listing = invoke("--help")
    assert listing.exit_code == 0
    for name in COMMANDS:
        assert name in listing.output
        res = invoke(name, "--help")
        assert res.exit_code == 0 and "Usage:" in res.output, (name, res.output)
    res = invoke("tasks", "import", "sgr-bench", "--help")
    assert res.exit_code == 0 and "--out" in res.output


def test_the_error_tree_maps_to_exit_codes(tmp_path):
    # InputError: bad input, 2
    res = invoke("tasks", "list", tmp_path / "missing.yaml")
    assert res.exit_code == 2 and "missing.yaml" in res.stderr and res.stderr.startswith("error: ")
    # InfraError: the rig could not do its part, 3
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        (tmp_path / "runs").mkdir()
        res = invoke("view", tmp_path / "runs", "--port", busy.getsockname()[1])
    assert res.exit_code == 3 and "cannot serve the report view on 127.0.0.1" in res.stderr
    # another RigError (an answer with no table, handed in as such): it ran and found something, 1
    episode = EpisodeDir(tmp_path / "episode")
    episode.path.mkdir()
    episode.write_episode(Episode(agent="cdp"))
    res = invoke("submit", episode.path, "--answer", PROSE)
    assert res.exit_code == 1 and "handed in as unparseable" in res.stderr
    assert episode.read_parse_failure() is not None
    # a usage error is bad input too
    assert invoke("grade", "--no-such-flag").exit_code == 2


def test_error_messages_keep_their_brackets(tmp_path):
    """Issue 23, item 7: rich markup would eat `[a-z0-9]` (and `[0]`) out of a message."""
    data = yaml.safe_load(VALID_TASK.read_text())
    data["canonicalize"] = {"columns": {"Flights": [{"regex_sub": {"pattern": PATTERN, "repl": ""}}]}}
    task = tmp_path / "bad.yaml"
    task.write_text(yaml.safe_dump(data))
    expected = f"canonicalize.columns.Flights[0]: regex_sub pattern '{PATTERN}'"
    res = invoke("tasks", "validate", task)  # an invalid file is what validate finds: 1
    assert res.exit_code == 1 and f"invalid {task}: {expected}" in res.stderr, res.stderr
    res = invoke("tasks", "list", task)  # the same file as input to list: 2, printed by the one error handler
    assert res.exit_code == 2 and f"error: {task}: {expected}" in res.stderr, res.stderr

    script = tmp_path / "relative.yaml"
    script.write_text("- goto: /search\n")
    res = invoke("record", "--script", script, "--out", tmp_path / "episode")
    assert res.exit_code == 2
    assert f"error: {script}: [0]: without --start-url the script must begin with an absolute `goto`" in res.stderr


def _lines(stream, into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:
            into.append(line)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@contextmanager
def _sigint_reaches_children() -> Iterator[None]:
    """Children started here take SIGINT as from a terminal's Ctrl-C, even when pytest itself was started with SIGINT
    ignored (a `cmd &` in a non-interactive shell: POSIX has background jobs ignore it, and exec keeps that)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler, unlike SIG_IGN, is reset by exec
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: The agent's command of the interrupt tests: it waits until the marker exists, then hands in an answer (one
#: command: one agent identity).
WAITING_AGENT = 'if [ -f "$MARK" ]; then "$RIG_BIN" submit "$RIG_EPISODE_DIR" --answer "$ANSWER"; else sleep 120; fi'


def _interrupted_run(tmp_path: Path, sig: signal.Signals) -> tuple[list[str], dict[str, str], EpisodeDir]:
    """Start `rig run` of two episodes into tmp_path/runs with `WAITING_AGENT`, send `sig` once the first episode's
    agent runs, and check the run stopped as Ctrl-C stops it: exit 130, no traceback, one line saying what is left and
    how to go on, the episode under way `incomplete` with what it recorded. Returns the run's arguments, its
    environment and that episode."""
    runs = tmp_path / "runs"
    answer = tmp_path / "answer.md"
    answer.write_text("| Date | Precipitation (mm) |\n|---|---|\n| 2014-11-01 | 12.0 |\n")
    env = {**os.environ, "MARK": str(tmp_path / "go"), "RIG_BIN": str(RIG), "ANSWER": str(answer)}
    args = [str(RIG), "run", "--task", "eco-01", "--task", "eco-02", "--variant", "constraint", "--agent", "cli",
            "--command", WAITING_AGENT, "--out", str(runs)]
    with _sigint_reaches_children():
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out: list[str] = []
    err: list[str] = []
    readers = [_lines(proc.stdout, out), _lines(proc.stderr, err)]
    try:
        wait_until_sync(lambda: any(line.startswith("Episode: ") for line in out) or proc.poll() is not None,
                        timeout=180, message=lambda: "".join(err[-20:]))
        wait_until_sync(lambda: any("cli agent: started" in line for line in err) or proc.poll() is not None,
                        timeout=60, message=lambda: "".join(err[-20:]))
        assert proc.poll() is None, "".join(err)
        proc.send_signal(sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for reader in readers:
        reader.join(timeout=10)
    said = "".join(err)
    assert proc.returncode == 130, said
    assert "Traceback" not in said and "never retrieved" not in said and "ERROR:" not in said, said
    told = [line.strip() for line in err if "interrupted" in line]
    assert told == [f"interrupted: 2 of 2 episodes left incomplete in {runs} (1 started, 1 not started); what they "
                    "recorded is kept: run the same command with --resume to finish them"], said
    started = EpisodeDir(next(line for line in out if line.startswith("Episode: ")).removeprefix("Episode: ").strip())
    assert started.read_episode().status == "incomplete"
    assert started.trajectory_file.stat().st_size > 0 and started.warc_file.stat().st_size > 0
    return args, env, started


def test_sigterm_during_a_run_stops_it_as_ctrl_c_does(tmp_path):
    """`kill`, `timeout` or a CI job being stopped: the episode under way stays `incomplete` with what it recorded."""
    _interrupted_run(tmp_path, signal.SIGTERM)


def test_a_command_called_in_a_worker_thread_runs_and_leaves_sigterm_as_it_was():
    """Only the main thread may set a signal handler: `rig` called from `asyncio.to_thread` still runs, and called
    in-process from the main thread it hands the caller's SIGTERM handler back when it ends."""
    results = []
    worker = threading.Thread(target=lambda: results.append(CliRunner().invoke(app, ["tasks", "list", "--json"])))
    worker.start()
    worker.join(60)
    assert results and results[0].exit_code == 0, results and (results[0].output, results[0].exception)

    before = signal.getsignal(signal.SIGTERM)
    assert CliRunner().invoke(app, ["tasks", "list", "--json"]).exit_code == 0
    assert signal.getsignal(signal.SIGTERM) is before


def test_ctrl_c_during_a_run_says_what_is_left_and_how_to_resume(tmp_path):
    """Issue 23, item 5: SIGINT once the first episode runs: one line (how many episodes are left, `--resume`),
    no traceback, exit 130; the episode under way stays `incomplete` with its files, and `--resume` finishes both."""
    args, env, started = _interrupted_run(tmp_path, signal.SIGINT)
    runs = tmp_path / "runs"
    kept_steps = started.trajectory_file.read_bytes()
    tasks = [resolve_task("eco-01"), resolve_task("eco-02")]
    agent = make_agent("cli", command=WAITING_AGENT)
    todo = plan(tasks, ["constraint"], agent.name, 1, RunsDir(runs), resume=True, identity=agent_identity(agent))
    assert [s.directory(RunsDir(runs)) for s in todo][0] == started, "--resume runs the interrupted episode again"
    assert len(todo) == 2, "and the one that had not started"

    (tmp_path / "go").write_text("")
    again = subprocess.run([*args, "--resume"], capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    episodes = RunsDir(runs).episodes()
    assert sorted(e.read_episode().status for e in episodes) == ["ok", "ok"]
    kept = EpisodeDir(started.path / "attempts" / "unfinished-1")  # what the interrupted run recorded, set aside
    assert kept.trajectory_file.read_bytes() == kept_steps and kept.read_episode().status == "incomplete"
