"""Security: no planted secret reaches any artifact of a run; names cannot escape their directories; replay and
frozen runs make no network request; an allow-listed live run reaches only the hosts allowed."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from loguru import logger
from PIL import Image
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright
from server import Exchange, TestServer
from waiting import wait_until

from replay import MatchRules, load_index, write_snapshot
from rig.agents.base import EpisodeEnv
from rig.agents.scripts import ReferenceAgent
from rig.browser import launch
from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.formats.answer import Answer
from rig.grading.runs import grade_runs
from rig.report import write_report
from rig.runner.config import RunConfig
from rig.runner.run import run
from rig.runner.spec import EpisodeSpec
from rig.sites.server import free_port
from rig.tasks import load_task, resolve_task

ROOT = Path(__file__).parents[1]
SNAPSHOTS = ROOT / "site_snapshots"
SECRETS = ["SECRETTOKEN1", "SECRETCOOKIE1", "SECRETCOOKIE2", "SECRETPASS1", "SECRETKEY1", "SECRETAUTH1", "SECRETTOKEN2",
           "SECRETTOKEN3"]


class PlantingAgent(ReferenceAgent):
    """The reference agent, with an Authorization header and a cookie planted in its browser context."""

    async def run(self, env: EpisodeEnv) -> Answer | None:
        await env.context.set_extra_http_headers({"Authorization": "Bearer SECRETAUTH1"})
        await env.context.add_cookies([{"name": "session", "value": "SECRETCOOKIE2", "url": env.sites_url}])
        return await super().run(env)


class TokenAgent(ReferenceAgent):
    """The reference agent, once the page holds its OAuth token and the recorder has seen the token response."""

    async def run(self, env: EpisodeEnv) -> Answer | None:
        await env.page.wait_for_selector("#ready:not(:empty)")
        await wait_until(lambda: env.recorder.redactor.text("SECRETOAUTH1") == "[redacted]",
                         message="the recorder did not learn the token from the token response")
        return await super().run(env)


def canary(port: int = 0) -> TestServer:
    """A server answering "ok" to anything (to a page's fetch too) and keeping every request that reached it.

    Chromium preconnects to the origin of every navigation before the request is routed: an idle connection that
    never carries a byte, and no request.
    """
    ok = {"Access-Control-Allow-Origin": "*"}
    return TestServer(port=port, fallback=lambda ex: ex.send(200, "ok", "text/plain", ok)).start()


def targets(srv: TestServer) -> list[str]:
    return [r.target for r in srv.requests]


_TABLE = "<table id=results><tr><th>Name</th><th>Value</th></tr><tr><td>alpha</td><td>1</td></tr>" \
         "<tr><td>beta</td><td>2</td></tr></table>"

_LOGIN = (
    "<!doctype html><title>Log in</title><h1>Log in</h1>"
    "<form action=welcome method=get><label>User <input id=user name=user></label>"
    "<label>Password <input id=pw name=password type=password></label>"
    "<button type=submit>Sign in</button></form>"
    "<button id=auth type=button>Check session</button><p id=status></p>"
    "<script>document.getElementById('auth').onclick = async () => {"
    "  const key = new URLSearchParams(location.hash.slice(1)).get('api_key');"
    "  const r = await fetch('api/me?api_key=' + key);"
    "  const s = document.getElementById('status'); s.textContent = (await r.json()).user; s.className = 'done'; };"
    "</script>")


class PeerServer:
    """Where a page's WebRTC would go: a STUN address (UDP) and a TURN-over-TCP address on 127.0.0.1 that answer
    nothing and count what reached them."""

    def __init__(self) -> None:
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        for sock in (self.udp, self.tcp):
            sock.bind(("127.0.0.1", 0))
            sock.setblocking(False)
        self.tcp.listen()
        self.stun_port, self.turn_port = self.udp.getsockname()[1], self.tcp.getsockname()[1]
        self.packets = self.connections = 0

    def heard(self) -> int:
        """How many STUN packets and TURN connections reached it so far."""
        for sock, read in ((self.udp, lambda: self.udp.recv(65536)), (self.tcp, lambda: self.tcp.accept()[0].close())):
            while True:
                try:
                    read()
                except BlockingIOError:
                    break
                if sock is self.udp:
                    self.packets += 1
                else:
                    self.connections += 1
        return self.packets + self.connections

    def close(self) -> None:
        self.udp.close()
        self.tcp.close()


#: A page opening a WebRTC peer connection (STUN, and TURN over TCP) from its window and from an iframe's; `#rtc`
#: says how each attempt went ("open", or the error's name).
_RTC = (
    "<!doctype html><title>Peers</title><h1>Peers</h1><p id=rtc></p><p id=ice></p>" + _TABLE +
    "<script>const q = new URLSearchParams(location.search); window.peers = [];"
    "const servers = [{urls: 'stun:127.0.0.1:' + q.get('stun')}];"
    "if (q.get('turn')) servers.push({urls: 'turn:127.0.0.1:' + q.get('turn') + '?transport=tcp', username: 'u', credential: 'c'});"
    "async function open(w) { try { const pc = new w.RTCPeerConnection({iceServers: servers}); window.peers.push(pc);"
    "  pc.onicegatheringstatechange = () => { document.getElementById('ice').textContent = pc.iceGatheringState; };"
    "  pc.createDataChannel('x'); await pc.setLocalDescription(await pc.createOffer()); return 'open'; }"
    "  catch (e) { return e.name; } }"
    "(async () => { const f = document.createElement('iframe'); document.body.appendChild(f);"
    "  const r = [await open(window)]; if (!q.has('one')) r.push(await open(f.contentWindow));"
    "  document.getElementById('rtc').textContent = r.join(' '); })();"
    "</script>")


#: Secrets a page learns, sends and shows (see `_KEYS`): by their names, a token response, a signed URL, user:password.
NAMED_SECRETS = ["SECRETOAUTH1", "SECRETOAUTH2", "SECRETHDR1", "SECRETSIG1", "SECRETCRED1", "SECRETUSERPW1",
                 "SECRETVISIBLE1", "SECRETAUTHKEY1"]

_KEYS = (
    "<!doctype html><title>Keys</title><h1>Keys</h1><p id=ready></p><p id=shown></p>"
    "<img alt=signed src='pixel?X-Amz-Signature=SECRETSIG1&X-Amz-Credential=SECRETCRED1&keyword=shoes'>"
    "<a id=mirror href='http://bob:SECRETUSERPW1@127.0.0.1:9/sec/'>http://bob:SECRETUSERPW1@127.0.0.1:9/sec/</a>"
    "<form action=welcome method=get><label>Memo <input id=memo name=memo autocomplete=current-password></label>"
    "<label>Key <input id=authKey name=authKey></label><input type=hidden name=keyword value=shoes>"
    "<button id=send type=submit>Send</button></form><button id=show type=button>Show</button>"
    "<script>let token = '';"
    "fetch('api/token', {method: 'POST'}).then(r => r.json()).then(async t => { token = t.access_token;"
    "  await fetch('api/data?accessToken=' + token, {headers: {'X-Api-Key': 'SECRET' + 'HDR1'}});"
    "  document.getElementById('ready').textContent = 'ready'; });"
    "document.getElementById('show').onclick = () => { document.title = 'Signed in ' + token;"
    "  document.getElementById('shown').textContent = 'token ' + token; alert('your token is ' + token); };"
    "</script>")


def sec_site(port: int = 0, beacon_img: str = "", beacon_fetch: str = "", beacon_ws: str = "") -> TestServer:
    """A small site under /sec/ that sets a cookie, takes a password and sends an Authorization header; what the
    browser sent it is in its `requests`."""

    def set_cookie(ex: Exchange) -> None:
        ex.redirect("/sec/login?token=SECRETTOKEN1#api_key=SECRETKEY1",
                    headers={"Set-Cookie": "sid=SECRETCOOKIE1; HttpOnly; Path=/; SameSite=lax"})

    def me(ex: Exchange) -> None:
        ex.send_json({"user": "bob" if "SECRETAUTH1" in ex.request.headers.get("authorization", "") else "nobody"})

    def beacon(ex: Exchange) -> None:
        extra = f"<img alt=pixel src='{beacon_img}/pixel.png'>" if beacon_img else ""
        script = (f"fetch('{beacon_fetch}/data').then(r => r.text()).then(t => document.getElementById('got').textContent = t)"
                  f".catch(() => document.getElementById('got').textContent = 'blocked');" if beacon_fetch else "")
        script += f"try {{ new WebSocket('{beacon_ws.replace('http', 'ws')}/ws'); }} catch (e) {{}}" if beacon_ws else ""
        ex.send(200, f"<!doctype html><title>Beacon</title><h1>Beacon</h1>{extra}<p id=got></p>{_TABLE}"
                     f"<script>{script}</script>")

    return TestServer(port=port, routes={
        "/sec/": lambda ex: ex.send(200, "<!doctype html><title>sec</title><h1>Secure</h1><a href=login>Log in</a>"),
        "/sec/set-cookie": set_cookie,
        "/sec/login": lambda ex: ex.send(200, _LOGIN),
        "/sec/api/me": me,
        "/sec/welcome": lambda ex: ex.send(200, f"<!doctype html><title>Welcome</title><h1>Welcome</h1>{_TABLE}"),
        "/sec/beacon": beacon,
        "/sec/rtc": lambda ex: ex.send(200, _RTC),
        "/sec/keys": lambda ex: ex.send(200, _KEYS),
        "/sec/api/token": lambda ex: ex.send_json({"access_token": "SECRETOAUTH1", "refresh_token": "SECRETOAUTH2",
                                                  "token_type": "Bearer", "expires_in": 3600}),
        "/sec/api/data": lambda ex: ex.send_json({"rows": 2}),
        "/sec/pixel": lambda ex: ex.send(200, "", "image/png"),
    })


def write_task(directory: Path, task_id: str, start_path: str, script: list[dict]) -> Path:
    """A task file for the /sec/ site whose reference solution is `script`."""
    data = {
        "id": task_id, "family": "test", "site": "sec", "start_path": start_path,
        "prompts": {"constraint": "Log in and list the table.", "goal": "What does the table hold?"},
        "output": {"columns": ["Name", "Value"], "key": ["Name"], "order": "as shown"},
        "gold": {"rows": [["alpha", "1"], ["beta", "2"]]},
        "gold_states": [{"name": "in", "constraints": [{"key": "url.path", "value": "/sec/welcome", "tag": "scope"}]}],
        "evidence": [{"state": "in", "description": "the table"}],
        "dependency": "none", "reference_solution": script, "data_version": "test==1",
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{task_id}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def artifacts(runs: Path) -> dict[str, bytes]:
    """Every file under a runs directory (gzip files decompressed too)."""
    out = {}
    for p in runs.rglob("*"):
        if p.is_file():
            out[str(p.relative_to(runs))] = data = p.read_bytes()
            if p.suffix == ".gz":
                out[f"{p.relative_to(runs)} (decompressed)"] = gzip.decompress(data)
    return out


@pytest.mark.slow
def test_no_planted_secret_reaches_any_artifact_of_a_run(tmp_path, monkeypatch):
    gone = free_port()
    login = write_task(tmp_path / "tasks", "sec-01", "/sec/", [
        {"goto": "/sec/set-cookie"},  # Set-Cookie, then a redirect to /sec/login?token=...
        {"fill": {"selector": "#user", "value": "bob"}},
        {"fill": {"selector": "#pw", "value": "SECRETPASS1"}},
        {"click": "#auth"},  # fetch ?api_key=... (from the fragment) with the Authorization header and the cookies
        {"wait_for": "#status.done"},
        {"click": 'role=button[name="Sign in"]'},  # a GET form: the password in the URL
        {"wait_for": "table#results"},
        {"extract_table": {"selector": "table#results", "as": "results"}},
        {"answer": {"from": "results", "columns": ["Name", "Value"]}},
    ])
    failing = write_task(tmp_path / "tasks", "sec-02", "/sec/", [
        {"goto": "/sec/login?token=SECRETTOKEN2"},
        {"goto": f"http://127.0.0.1:{gone}/gone?token=SECRETTOKEN3"},  # refused: the error message holds the URL
        {"extract_table": {"selector": "table#results", "as": "results"}},
        {"answer": {"from": "results", "columns": ["Name", "Value"]}},
    ])
    runs = tmp_path / "runs"
    monkeypatch.setattr("rig.runner.run.make_agent", lambda name, **kw: PlantingAgent())
    logger.enable("recorders")  # the recorder's own logs go to run.log too
    try:
        with sec_site() as site:
            url = site.url
            episodes = run(RunConfig([str(login), str(failing)], "reference", runs, variants=["constraint"], sites_url=url))
    finally:
        logger.disable("recorders")
    assert [e.status for e in episodes] == ["ok", "agent_error"], [e.error for e in episodes]
    assert "ERR_CONNECTION_REFUSED" in episodes[1].error and "token=%5Bredacted%5D" in episodes[1].error

    # every secret really went over the wire
    sent = json.dumps([[r.target, dict(r.headers), r.body.decode("utf-8", "replace")] for r in site.requests])
    for secret in SECRETS[:-1]:
        assert secret in sent, secret
    grade_runs(runs)
    write_report(runs)
    files = artifacts(runs)
    names = set(files)
    assert {"run.log", "summary.json"} <= names and any(n.endswith(".jpg") for n in names)
    assert b"recorders" in files["run.log"] and b"sec-02/constraint/reference#0: agent_error" in files["run.log"]
    assert any(n.endswith("grade.json") for n in names) and any(n.startswith("report/") for n in names)
    for name, data in files.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} found in {name}"
    for jpg in runs.rglob("*.jpg"):
        with Image.open(jpg) as im:
            meta = json.dumps({"exif": {str(k): str(v) for k, v in im.getexif().items()},
                               "info": {k: str(v) for k, v in im.info.items()}})
        assert not any(s in meta for s in SECRETS), jpg
    steps = [json.loads(x) for x in (EpisodeSpec(load_task(login), "constraint", "reference", 0).directory(runs)
                                     / "trajectory.jsonl").read_text().splitlines()]
    assert steps[3]["action"]["value"] == "[redacted]" and steps[3]["state"]["form.password"] == "[redacted]"
    assert any(s["state"].get("url.query.token") == "[redacted]" for s in steps)


def test_names_cannot_escape_their_directories(tmp_path):
    for ref in ("../x", "../../etc/passwd", "/etc/passwd", "..", ".hidden", "a/b"):
        with pytest.raises(InputError, match="path separators|no bundled task"):
            resolve_task(ref)
    good = yaml.safe_load((ROOT / "tests/data/tasks/valid.yaml").read_text())
    for field, value in (("id", "../escape"), ("id", "/abs"), ("site", "../flights"), ("site", "/abs")):
        path = tmp_path / f"{field}.yaml"
        path.write_text(yaml.safe_dump({**good, field: value, "start_path": f"/{value}/" if field == "site" else "/flights/"}))
        with pytest.raises(InputError) as exc:
            load_task(path)
        assert str(path) in str(exc.value) and exc.value.field == field
    with pytest.raises(InputError, match="agent name"):
        EpisodeSpec(load_task(ROOT / "tests/data/tasks/valid.yaml"), "goal", "../..", 0).directory(tmp_path)


@pytest.mark.parametrize("name,field", [("../../secrets.warc.gz", "warcs"), ("/etc/passwd", "warcs"),
                                        ("../eco", "site"), ("/abs", "site")])
def test_snapshot_names_cannot_escape(tmp_path, name, field):
    from rig.runner.frozen import open_frozen

    snap = tmp_path / "site_snapshots" / "eco"
    snap.mkdir(parents=True)
    manifest = json.loads((SNAPSHOTS / "eco" / "manifest.json").read_text())
    manifest[field] = [name] if field == "warcs" else name
    (snap / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError) as exc:
        open_frozen(tmp_path / "site_snapshots")
    assert str(snap / "manifest.json") in str(exc.value) and field in str(exc.value)
    assert "inside" in str(exc.value)


def test_frozen_run_makes_no_network_request(tmp_path, monkeypatch):
    """The frozen sites are put on a listening origin: nothing may connect to it (and no sites server is started)."""
    import rig.runner.run

    listener, real = canary(), rig.runner.run.open_frozen

    def on_canary(path, tasks=()):
        frozen = real(path, tasks)
        frozen.start_url_base = listener.url
        return frozen

    monkeypatch.setattr(rig.runner.run, "open_frozen", on_canary)
    monkeypatch.setattr("rig.runner.run.SitesServer", None)  # serving the live sites would fail the run
    try:
        [ep] = run(RunConfig(["eco-02"], "reference", tmp_path, variants=["constraint"], frozen=SNAPSHOTS))
    finally:
        listener.stop()
    assert ep.status == "ok" and ep.replay_misses == 0 and ep.start_url.startswith(listener.url)
    assert listener.requests == [], f"a request reached the frozen origin: {targets(listener)}"


def test_replay_makes_no_network_request(tmp_path):
    """Record against a local site, stop it and listen on its port instead: replay connects to nothing."""
    from rig.commands.replay import replay

    port = free_port()
    task = write_task(tmp_path / "tasks", "sec-03", "/sec/", [
        {"goto": "/sec/login?token=SECRETTOKEN2"},
        {"click": "#auth"},
        {"wait_for": "#status.done"},
        {"click": 'role=button[name="Sign in"]'},
        {"extract_table": {"selector": "table#results", "as": "results"}},
        {"answer": {"from": "results", "columns": ["Name", "Value"]}},
    ])
    with sec_site(port) as site:
        url = site.url
        [ep] = run(RunConfig([str(task)], "reference", tmp_path / "runs", variants=["constraint"], sites_url=url))
    assert ep.status == "ok" and site.requests
    listener = canary(port)
    try:
        report = replay(EpisodeSpec(load_task(task), "constraint", "reference", 0).directory(tmp_path / "runs"))
    finally:
        listener.stop()
    assert listener.requests == [], f"a request reached the recorded origin: {targets(listener)}"
    assert report.steps == ep.steps and report.matched == report.steps, report.to_json()


@pytest.mark.slow
def test_allow_list_blocks_every_other_host(tmp_path):
    outside, allowed = canary(), canary()
    task = write_task(tmp_path / "tasks", "sec-04", "/sec/beacon", [
        {"wait_for": "#got:not(:empty)"},
        {"extract_table": {"selector": "table#results", "as": "results"}},
        {"extract_text": {"selector": "#got", "as": "got"}},
        {"answer": {"from": "results", "columns": ["Name", "Value"]}},
    ])
    try:
        with sec_site(beacon_img=outside.url, beacon_fetch=allowed.url, beacon_ws=outside.url) as site:
            url = site.url
            [open_ep] = run(RunConfig([str(task)], "reference", tmp_path / "open", variants=["constraint"], sites_url=url))
            assert open_ep.status == "ok" and open_ep.blocked_requests is None
            assert outside.requests, "without an allow-list the page reaches the other host"
            before_out, before_ok = len(outside.requests), len(allowed.requests)
            [ep] = run(RunConfig([str(task)], "reference", tmp_path / "listed", variants=["constraint"], sites_url=url, allow_hosts=[f"127.0.0.1:{allowed.port}"]))
    finally:
        outside.stop()
        allowed.stop()
    assert ep.status == "ok", ep.error
    assert outside.requests[before_out:] == [], "the allow-listed run reached a host it was not allowed"
    assert allowed.requests[before_ok:], "the allowed host was reached"
    saved = EpisodeDir(EpisodeSpec(load_task(task), "constraint", "reference", 0).directory(tmp_path / "listed")).read_episode()
    port = url.rsplit(":", 1)[1]
    assert saved.allowed_hosts == sorted([f"127.0.0.1:{allowed.port}", f"127.0.0.1:{port}"])
    assert saved.blocked_requests >= 2
    assert f"{outside.url}/pixel.png" in saved.blocked_urls
    assert f"ws://127.0.0.1:{outside.port}/ws" in saved.blocked_urls
    with pytest.raises(InputError, match="not a host"):
        run(RunConfig([str(task)], "reference", tmp_path / "bad", sites_url=url, allow_hosts=["http://example.org/x"]))



async def _gathering_ends(peers: PeerServer, browser, url: str) -> tuple[int, str]:
    """Open `url` in a fresh context of `browser`; wait until the STUN server heard something new or ICE gathering
    ended; return (how much it heard, the page's gathering state)."""
    before = peers.heard()
    page = await (await browser.new_context()).new_page()
    await page.goto(url)
    ice = page.locator("#ice")
    await wait_until(lambda: peers.heard() > before or _complete(ice), message="no STUN packet, ICE gathering not over")
    return peers.heard() - before, await ice.text_content()


async def _complete(ice) -> bool:
    return await ice.text_content() == "complete"


async def test_webrtc_reaches_a_stun_server_only_from_an_unsealed_browser():
    """The control (a plain rig browser's peer connection sends its STUN request) and the launch flags on their
    own (no init script): a sealed browser's ICE gathering ends having sent nothing."""
    peers = PeerServer()
    try:
        with sec_site() as site:
            url = f"{site.url}/sec/rtc?one=1&stun={peers.stun_port}"
            async with async_playwright() as pw:
                browser = await launch(pw)
                try:
                    heard, state = await _gathering_ends(peers, browser, url)
                finally:
                    await browser.close()  # its STUN retransmissions end with it
                if not heard:
                    pytest.skip(f"ICE gathering ended ({state}) without a STUN request: no interface to send from")
                browser = await launch(pw, sealed=True)
                try:
                    heard, state = await _gathering_ends(peers, browser, url)
                finally:
                    await browser.close()
    finally:
        peers.close()
    assert state == "complete" and heard == 0, "the sealed browser's peer connection reached the STUN server"


async def test_what_passes_the_routes_of_an_archive_only_browser_reaches_no_server():
    """Playwright lets some requests past its routes (a favicon, a request of a frame it no longer knows): from the
    browser frozen runs, `rig replay` and `rig render` use, even a page with no route at all reaches no server on
    this machine, by address or by name (the loopback proxy refuses); the control, a plain rig browser, does."""
    with TestServer(fallback=lambda ex: ex.send(200, b"<title>reached</title>")) as server:
        async with async_playwright() as pw:
            for archive_only in (False, True):
                browser = await launch(pw, archive_only=archive_only)
                titles = []
                try:
                    page = await browser.new_page()
                    for url in (f"{server.url}/by-address", f"http://localhost:{server.port}/by-name"):
                        try:
                            await page.goto(url)
                            titles.append(await page.title())
                        except PlaywrightError as exc:
                            titles.append("refused" if "ERR_PROXY_CONNECTION_FAILED" in str(exc) else str(exc))
                finally:
                    await browser.close()
                reached = {r.target for r in server.requests} & {"/by-address", "/by-name"}
                if archive_only:
                    assert titles == ["refused"] * 2 and not reached, (titles, reached)
                else:
                    assert titles == ["reached"] * 2 and len(reached) == 2, (titles, reached)
                server.reset()


def _snapshot_of(episode: EpisodeDir, out: Path, start_path: str) -> Path:
    """A site snapshot of the `sec` test site from one recorded episode's archive (for a frozen run)."""
    index = load_index(episode.path / "evidence.warc.gz", MatchRules(ignore_origin=True), dedupe=True)
    write_snapshot(index, out / "sec", site="sec", path_prefix="/sec/", built_at=datetime(2025, 1, 1, tzinfo=UTC),
                   rig_version="test", data_version=["test==1"], start_path=start_path)
    return out / "sec"


@pytest.mark.slow
def test_no_webrtc_escapes_an_allow_listed_frozen_or_replayed_run(tmp_path):
    """A page opening peer connections (STUN over UDP, TURN over TCP, from its window and an iframe's) to a listener
    on 127.0.0.1, an IP literal outside every rule: in allow-listed, frozen and replayed runs both attempts are
    refused and nothing reaches the listener."""
    from rig.commands.replay import replay

    peers = PeerServer()
    start = f"/sec/rtc?stun={peers.stun_port}&turn={peers.turn_port}"
    task = write_task(tmp_path / "tasks", "sec-05", start, [
        {"wait_for": "#rtc:not(:empty)"},
        {"extract_table": {"selector": "table#results", "as": "results"}},
        {"answer": {"from": "results", "columns": ["Name", "Value"]}},
    ])
    recorded = EpisodeSpec(load_task(task), "constraint", "reference", 0).directory(tmp_path / "open")
    try:
        with sec_site() as site:
            url = site.url
            [open_ep] = run(RunConfig([str(task)], "reference", tmp_path / "open", variants=["constraint"], sites_url=url))
            before = peers.heard()  # the unsealed run's attempts (its browser is closed: no more come)
            [listed] = run(RunConfig([str(task)], "reference", tmp_path / "listed", variants=["constraint"],
                                     sites_url=url, allow_hosts=["127.0.0.1:1"]))
            assert peers.heard() == before, "the allow-listed run reached the STUN/TURN listener"
        snapshot = _snapshot_of(recorded, tmp_path / "snap", start)
        [frozen] = run(RunConfig([str(task)], "reference", tmp_path / "frozen", variants=["constraint"], frozen=snapshot))
        assert peers.heard() == before, "the frozen run reached the STUN/TURN listener"
        replay(recorded)
        assert peers.heard() == before, "the replay reached the STUN/TURN listener"
    finally:
        peers.close()
    assert [open_ep.status, listed.status, frozen.status] == ["ok"] * 3, [open_ep.error, listed.error, frozen.error]
    assert frozen.replay_misses == 0
    texts = {name: gzip.decompress((tmp_path / name / recorded.path.relative_to(tmp_path / "open")
                                    / "evidence.warc.gz").read_bytes()) for name in ("open", "listed", "frozen")}
    assert b"open open" in texts["open"], "the unsealed page did not open its peer connections"
    for name in ("listed", "frozen"):
        assert b"NotAllowedError NotAllowedError" in texts[name], f"the {name} page's peer connections were not refused"


@pytest.mark.slow
def test_secrets_named_by_their_parts_reach_no_artifact(tmp_path, monkeypatch):
    """Secrets named like real sites name them (`X-Api-Key`, `accessToken`, `authKey`, a signed URL's
    `X-Amz-Signature`), an OAuth token response, `user:password@` in a link, a password field that is one by its
    `autocomplete`; the token shown later in the page text, the title and a dialog. None reaches any artifact or the
    run log; `keyword=shoes` (no secret) stays."""
    task = write_task(tmp_path / "tasks", "sec-06", "/sec/keys", [
        {"click": "#show"},
        {"wait_for": "#shown:not(:empty)"},
        {"fill": {"selector": "#memo", "value": "SECRETVISIBLE1"}},
        {"fill": {"selector": "#authKey", "value": "SECRETAUTHKEY1"}},
        {"click": "#send"},
        {"wait_for": "table#results"},
        {"extract_table": {"selector": "table#results", "as": "results"}},
        {"answer": {"from": "results", "columns": ["Name", "Value"]}},
    ])
    runs = tmp_path / "runs"
    monkeypatch.setattr("rig.runner.run.make_agent", lambda name, **kw: TokenAgent())
    logger.enable("recorders")
    try:
        with sec_site() as site:
            [ep] = run(RunConfig([str(task)], "reference", runs, variants=["constraint"], sites_url=site.url))
    finally:
        logger.disable("recorders")
    assert ep.status == "ok", ep.error
    sent = json.dumps([[r.target, dict(r.headers), r.body.decode("utf-8", "replace")] for r in site.requests])
    for secret in ("SECRETHDR1", "SECRETSIG1", "SECRETCRED1", "SECRETOAUTH1", "SECRETVISIBLE1", "SECRETAUTHKEY1"):
        assert secret in sent, f"{secret} was not planted"
    saved = EpisodeDir(EpisodeSpec(load_task(task), "constraint", "reference", 0).directory(runs)).read_episode()
    assert [d["message"] for d in saved.dialogs] == ["your token is [redacted]"]
    files = {name: data for name, data in artifacts(runs).items() if not name.endswith(".jpg")}
    assert {"run.log"} <= set(files) and any(n.endswith("evidence.warc.gz (decompressed)") for n in files)
    for name, data in files.items():
        for secret in NAMED_SECRETS:
            assert secret.encode() not in data, f"{secret} found in {name}"
    warc = next(data for name, data in files.items() if name.endswith("evidence.warc.gz (decompressed)"))
    assert b"keyword=shoes" in warc, "a name that is no secret was redacted"
    assert b"<title>Signed in %5Bredacted%5D</title>" in warc and b"token [redacted]" in warc  # the DOM, the text


# --- redirects and loopback in live runs (the offline web, tests/liveweb.py) -----------------------------------


def live_task(directory: Path, task_id: str, start_url: str, origins: list[str]) -> Path:
    """A start_url task (no gold rows) for agents that only try to get somewhere."""
    data = {"id": task_id, "family": "test", "start_url": start_url, "origins": origins,
            "prompts": {"constraint": "Go somewhere.", "goal": "Go somewhere."},
            "output": {"columns": ["Where"], "key": ["Where"], "order": "as found"}, "gold": {"rows": []}}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{task_id}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


class WanderingAgent:
    """Goes to each URL in turn, each in a tab of its own (a failed navigation's error page cannot interrupt the
    next), and notes where it ended up. `("goto", url, None)`: a navigation that lands or fails; `("moves", url,
    dest)`: a page that moves itself on (a meta refresh, a script) towards `dest`, waited for until the browser's
    request for `dest` ended, however it ended."""

    name, model, needs_cdp = "wandering", None, False

    def __init__(self, visits: list[tuple[str, str, str | None]]) -> None:
        self.visits = visits
        self.outcomes: list[str] = []

    async def run(self, env: EpisodeEnv) -> Answer | None:
        ended: dict[str, asyncio.Future] = {}

        def end(request) -> None:
            if request.url in ended and not ended[request.url].done():
                ended[request.url].set_result(request.failure or "loaded")

        env.context.on("requestfinished", end)
        env.context.on("requestfailed", end)
        for kind, url, dest in self.visits:
            if dest is not None:
                ended[dest] = asyncio.get_running_loop().create_future()
            page = await env.context.new_page()
            try:
                await page.goto(url)
                self.outcomes.append(page.url)
            except PlaywrightError as exc:
                self.outcomes.append(f"error: {str(exc).splitlines()[0]}")
            if kind == "moves":
                await asyncio.wait_for(ended[dest], 30)
            await page.close()
        return Answer(columns=["Where"], rows=[])


def _live(liveweb, **config) -> dict:
    return dict(variants=["constraint"], live=True, resolve=liveweb.resolve_args()[1::2], ignore_https_errors=True,
                **config)


def test_no_redirect_escapes_the_allow_list_of_a_live_run(liveweb, tmp_path, monkeypatch):
    """An allow-listed live run: an HTTP redirect to another host, one to a loopback port, a chain of hops ending on
    another host, and a meta refresh and a script navigation that lead to a redirect: every hop to a host not allowed
    is refused (0 requests arrive there) and recorded with its chain."""
    doc = liveweb.archive.url("/doc/1")
    secret = liveweb.secret.url("/by-redirect")
    go_doc, go_secret = liveweb.redirect_url("go", doc), liveweb.redirect_url("go", secret)
    hops = liveweb.redirect_url("hops", liveweb.archive.url("/doc/2"), hops=3)
    meta_to = liveweb.redirect_url("go", doc + "?via=meta")
    script_to = liveweb.redirect_url("go", doc + "?via=script")
    meta, script = liveweb.redirect_url("meta", meta_to), liveweb.redirect_url("script", script_to)
    agent = WanderingAgent([("goto", go_doc, None), ("goto", go_secret, None), ("goto", hops, None),
                            ("moves", meta, doc + "?via=meta"), ("moves", script, doc + "?via=script")])
    monkeypatch.setattr("rig.runner.run.make_agent", lambda name, **kw: agent)
    task = live_task(tmp_path / "tasks", "escape-01", liveweb.redirect.url("/start"), [liveweb.REDIRECT])
    [ep] = run(RunConfig([str(task)], "wandering", tmp_path / "runs", **_live(liveweb, allow_hosts=[])))

    assert (liveweb.archive.hits, liveweb.secret.hits) == (0, 0), "a redirect reached a host the run did not allow"
    assert ep.status == "ok", ep.error
    assert all(o.startswith("error:") for o in agent.outcomes[:3]), agent.outcomes  # the pages that move may land first
    assert liveweb.redirect.requests_to("/hops/0") and liveweb.redirect.requests_to("/go"), "\n".join(agent.outcomes)
    saved = EpisodeDir(EpisodeSpec(load_task(task), "constraint", "wandering", 0).directory(tmp_path / "runs"))
    saved_ep = saved.read_episode()
    assert saved_ep.allowed_hosts == ["redirect.example.com", "redirect.example.com:443"]
    chains = {b.url: b.chain for b in saved_ep.blocked or []}
    assert set(chains) == {doc, secret, liveweb.archive.url("/doc/2"), doc + "?via=meta", doc + "?via=script"}
    assert chains[doc] == [go_doc, doc] and chains[secret] == [go_secret, secret]
    assert chains[liveweb.archive.url("/doc/2")] == [liveweb.redirect.url(f"/hops/{n}", to=liveweb.archive.url(
        "/doc/2")) for n in (3, 2, 1, 0)] + [liveweb.archive.url("/doc/2")]
    for moved, page in ((doc + "?via=meta", meta), (doc + "?via=script", script)):
        # the page that sent the browser on (its Referer; cross-origin only the origin), the hops, the refused URL
        assert chains[moved][0] in (page, liveweb.redirect.origin + "/") and chains[moved][-1] == moved, chains[moved]
    assert {b.reason for b in saved_ep.blocked} == {"not on the run's allow-list"}
    assert {b.by for b in saved_ep.blocked if b.url in (doc, secret, liveweb.archive.url("/doc/2"))} == {"proxy"}
    assert saved_ep.blocked_requests == 5 and set(saved_ep.blocked_urls) == set(chains)
    assert saved_ep.refused_connections >= 5


def test_loopback_is_closed_to_a_live_run_unless_the_task_names_it(liveweb, tmp_path, monkeypatch):
    """A live run without --allow-host reaches the --resolve-mapped hosts, but no loopback port the task does not
    name (directly, by a redirect, or the sites server); a task whose origins name the port reaches it."""
    secret = liveweb.secret.url("/direct")
    via = liveweb.redirect_url("go", liveweb.secret.url("/by-redirect"))
    sites = {}

    class Wanderer(WanderingAgent):
        async def run(self, env: EpisodeEnv) -> Answer | None:
            sites["url"] = env.sites_url
            self.visits = [("goto", secret, None), ("goto", via, None), ("goto", env.sites_url + "/", None),
                           ("goto", liveweb.portal.url("/search"), None)]
            return await super().run(env)

    agent = Wanderer([])
    monkeypatch.setattr("rig.runner.run.make_agent", lambda name, **kw: agent)
    closed = live_task(tmp_path / "tasks", "loop-01", liveweb.redirect.url("/start"), [liveweb.REDIRECT])
    [ep] = run(RunConfig([str(closed)], "wandering", tmp_path / "runs", **_live(liveweb)))
    assert liveweb.secret.hits == 0, "a live run reached a loopback port its task does not name"
    assert ep.status == "ok", ep.error
    assert [o.startswith("error:") for o in agent.outcomes] == [True, True, True, False], agent.outcomes
    assert agent.outcomes[3] == liveweb.portal.url("/search"), "a --resolve-mapped host is reached"
    saved = EpisodeDir(EpisodeSpec(load_task(closed), "constraint", "wandering", 0).directory(tmp_path / "runs"))
    blocked = {b.url: b for b in saved.read_episode().blocked or []}
    assert set(blocked) == {secret, liveweb.secret.url("/by-redirect"), sites["url"] + "/"}
    assert (blocked[secret].by, blocked[liveweb.secret.url("/by-redirect")].by) == ("browser", "proxy")
    assert all(b.reason.startswith("loopback is closed to live runs") for b in blocked.values())
    assert blocked[liveweb.secret.url("/by-redirect")].chain == [via, liveweb.secret.url("/by-redirect")]

    named = live_task(tmp_path / "tasks", "loop-02", liveweb.redirect.url("/start"),
                      [liveweb.REDIRECT, f"127.0.0.1:{liveweb.secret.port}"])
    agent.outcomes.clear()
    [ep] = run(RunConfig([str(named)], "wandering", tmp_path / "runs", **_live(liveweb)))
    assert ep.status == "ok", ep.error
    assert agent.outcomes[:2] == [secret, liveweb.secret.url("/by-redirect")], agent.outcomes
    assert [r.path for r in liveweb.secret.requests if r.path != "/favicon.ico"] == ["/direct", "/by-redirect"]


async def test_web_fetch_follows_no_redirect_out_of_the_allow_list(liveweb, tmp_path, sites_url):
    """The MCP tools' `web_fetch`, called by the official `mcp` client in another process: a page that redirects to
    a host not allowed is refused at the hop (0 requests there) and recorded with its chain; the episode's own MCP
    endpoint, on loopback, cannot be fetched either."""
    import shlex
    import sys

    from rig.agents.base import Budget
    from rig.agents.cli_agent import CliAgent
    from rig.network import Network
    from rig.runner.local import run_local
    from rig.tasks import load_task

    doc = liveweb.archive.url("/doc/1") + "?via=fetch"
    go = liveweb.redirect_url("go", doc)
    calls = [{"tool": "web_fetch", "args": {"url": go}}, {"tool": "web_fetch", "args": {"url": "MCP_URL"}},
             {"tool": "final_answer", "args": {"answer": "| Where |\n|---|\n"}}]
    template, out = tmp_path / "calls.template.json", tmp_path / "results.json"
    template.write_text(json.dumps(calls))
    client = Path(__file__).parent / "mcp_client_script.py"
    command = (f'sed "s|MCP_URL|$RIG_MCP_URL|" {shlex.quote(str(template))} > {shlex.quote(str(tmp_path / "calls.json"))}'
               f" && {shlex.quote(sys.executable)} {shlex.quote(str(client))} "
               f"{shlex.quote(str(tmp_path / 'calls.json'))} --out {shlex.quote(str(out))}")
    task = load_task(live_task(tmp_path / "tasks", "fetch-01", liveweb.redirect.url("/start"), [liveweb.REDIRECT]))
    agent = CliAgent(command)
    spec = EpisodeSpec(task, "constraint", agent.name, 0)
    network = Network.of(True, liveweb.resolve_args()[1::2], ignore_https_errors=True)
    [ep] = await run_local([spec], agent, tmp_path / "runs", sites_url=sites_url, allow_hosts=[], network=network,
                           budget=Budget(max_steps=60, timeout_s=240, stall_s=240))
    assert liveweb.archive.hits == 0, "web_fetch followed a redirect to a host the run did not allow"
    assert ep.status == "ok", ep.error
    results = json.loads(out.read_text())
    assert [r["is_error"] for r in results[:2]] == [True, True], results
    mcp_url = results[1]["args"]["url"]
    assert mcp_url.startswith("http://127.0.0.1:") and liveweb.redirect.requests_to("/go")
    saved = EpisodeDir(spec.directory(tmp_path / "runs").path).read_episode()
    blocked = {b.url: b for b in saved.blocked or []}
    assert blocked[doc].chain == [go, doc] and blocked[doc].by == "proxy"
    assert blocked[mcp_url].reason == "not on the run's allow-list" and blocked[mcp_url].by == "browser"
