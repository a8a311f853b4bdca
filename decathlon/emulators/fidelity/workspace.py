"""The Google Workspace emulator (Drive, Sheets, Forms, Calendar) against Google's own recorded answers: each
recorded run's calls of the agents' three Workspace servers replayed in order through those servers on a fresh
emulator of its own, seeded with what the run showed of the Workspace it met (workspace_seed.py), and each answer
compared with the one the model was shown:
- `google_sheet-*`: the real mcp-google-sheets 0.4.1 (its virtualenv `google-sheets`, `mcp-google-sheets`), signed in
  with the episode's OAuth user token file, its Drive folder the run's own where an answer shows it;
- `google_calendar-*`, `google_forms-*`: our stand-ins (decathlon.standins.google_calendar, .google_forms, on the
  `google-workspace` virtualenv), signed in as an episode signs them in.
Each server runs as an agent's MCP client starts it and reaches Google's host names through the SaaS front, behind
which are the workspace emulator (seeded over its control socket) and the gcp one (the OAuth token endpoint), both
processes on the SaaS virtualenv, as an episode runs them.

How an answer is judged: its text items (several are shown as the JSON list of MCP content items), each as JSON where
it is JSON (the same keys in the same order, the same values and types), else as text, exactly; an error by its text,
exactly. Allowed to differ, and why:
- ids Google drew for what the run creates (a spreadsheet's id, a new sheet's sheetId, a form's id, an event's id):
  the emulator draws its own; each is learned from the creation's answer and read as the emulator's in every later
  argument and recorded answer (a form's responderUri holds its id, and so follows);
- the calendar stand-in's masked time zones: the recorder masked a time zone it took for a secret (`As**********ng`);
  the call is made with the IANA zone of that length, first and last letters (the answer text names no zone).
A call is "cannot rebuild", with why, where its answer hangs on what the run does not show: the recorder cut the
answer (an overlong output saved elsewhere), the run's own MCP client failed (a timeout or a dead server: no answer of
Google's at all), or it reads cells of a spreadsheet the run met that no answer showed whole from A1 (every grid the
runs met is cut but one, so the cells are unknown).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from decathlon.emulators.fidelity import google_mcp
from decathlon.emulators.fidelity.emulator import Emulator, servers_dir
from decathlon.emulators.fidelity.recorded import Case, Exchange, exchanges
from decathlon.emulators.fidelity.workspace_seed import SHEETS, Seen, cut, extent, json_of, rebuild, texts, write

CALENDAR, FORMS = "google_calendar-", "google_forms-"
PREFIXES = (SHEETS, CALENDAR, FORMS)
CLIENT_FAILED = re.compile(r"^Error running tool [\w-]+: Error invoking MCP tool \w+: (.*)", re.S)
CREATED_EVENT = "Event created with ID: "
ID_KEYS = ("spreadsheetId", "sheetId", "formId")
GRID_READS = {"get_sheet_data", "get_sheet_formulas"}


def unmasked(arguments: dict[str, Any]) -> dict[str, Any]:
    """Each masked time zone of an event's start and end read as an IANA zone of its length, first and last letters
    (the first of those in order: the answer's text names no time zone, so which one cannot show)."""
    def zone(masked: str) -> str:
        m = re.fullmatch(r"(\w+?)(\*{3,})(\w+)", masked)
        if m is None:
            return masked
        fits = sorted(z for z in zoneinfo.available_timezones() if len(z) == len(masked)
                      and z.startswith(m.group(1)) and z.endswith(m.group(3)))
        return fits[0] if fits else masked

    out = json.loads(json.dumps(arguments))
    for key in ("start", "end"):
        if isinstance(out.get(key), dict) and isinstance(out[key].get("timeZone"), str):
            out[key]["timeZone"] = zone(out[key]["timeZone"])
    return out


def learned(ex: Exchange, recorded: str, live: str) -> dict[str, str]:
    """The ids Google drew in a creation's answer, each to the one the emulator drew for the same object."""
    if ex.tool.startswith(CALENDAR):
        heads = [t.split("\n", 1)[0] for t in (recorded, live)]
        if all(h.startswith(CREATED_EVENT) for h in heads):
            return {heads[0].removeprefix(CREATED_EVENT): heads[1].removeprefix(CREATED_EVENT)}
        return {}
    a, b = json_of(recorded), json_of(live)
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return {}
    return {str(a[k]): str(b[k]) for k in ID_KEYS if k in a and k in b and a[k] != b[k]}


@dataclass
class Judge:
    seen: Seen
    ids: dict[str, str] = field(default_factory=dict)  # recorded id → the emulator's

    def live(self, text: str) -> str:
        for recorded, live in self.ids.items():
            text = text.replace(recorded, live)
        return text

    def why_not(self, ex: Exchange) -> str | None:
        failed = CLIENT_FAILED.match(ex.answer)
        if failed:
            return f"the run's MCP client failed ({failed.group(1).strip()[:80]}): no answer of Google's"
        if cut(ex.answer):
            return "the recorder cut the answer (an overlong output saved elsewhere)"
        tool, args = ex.tool.removeprefix(SHEETS), ex.arguments
        book = str(args.get("spreadsheet_id") or "")
        if ex.tool.startswith(SHEETS) and tool in GRID_READS and book not in self.seen.created:
            shown = self.seen.shown.get((book, str(args.get("sheet"))))
            span = extent(args.get("range"))
            if shown is None or span is None or span[:2] != (0, 0) or not shown.covers(span[2], span[3]):
                return f"reads cells of sheet {args.get('sheet')!r} the run never showed whole"
        return None

    def __call__(self, ex: Exchange, answer: str) -> Case:
        why = self.why_not(ex)
        if why:
            return Case(ex, "cannot-rebuild", why, ex.answer, answer)
        if not answer.startswith("Error"):
            self.ids.update(learned(ex, ex.answer, answer))  # a creation's own answer reads with the ids it drew
        recorded = self.live(ex.answer)
        if recorded.startswith("Error") or answer.startswith("Error"):
            return Case(ex, "agreed" if recorded == answer else "disagreed", "error text", recorded, answer)
        a, b = texts(recorded), texts(answer)
        docs = [json_of(t) for t in a]
        how = "content" if any(d is not None for d in docs) else "text"
        ok = len(a) == len(b) and all(same(json_of(x), json_of(y)) if json_of(x) is not None else x == y
                                      for x, y in zip(a, b))
        return Case(ex, "agreed" if ok else "disagreed", how, recorded, answer)


def same(recorded: Any, emulated: Any) -> bool:
    """The same JSON: keys in the same order, values of the same types and equal."""
    if isinstance(recorded, dict) and isinstance(emulated, dict):
        return list(recorded) == list(emulated) and all(same(recorded[k], emulated[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(emulated, list):
        return len(recorded) == len(emulated) and all(same(x, y) for x, y in zip(recorded, emulated))
    return type(recorded) is type(emulated) and recorded == emulated


# ---- running the servers on the emulators ----------------------------------------------------------------------

@dataclass
class Servers:
    """How each server is started, as an episode starts it (signed in with the gcp emulator's credentials)."""

    folder: Path
    servers: Path
    front: dict[str, str]
    drive_folder: str

    def launch(self, prefix: str) -> tuple[Path, list[str], dict[str, str]]:
        from decathlon.emulators.gcp import credentials

        home = self.folder / "home"
        home.mkdir(exist_ok=True)
        base = {**self.front, "HOME": str(home)}
        if prefix == SHEETS:
            token = home / "token.json"
            token.write_text(credentials.authorized_user())
            return (self.servers / "google-sheets" / "bin" / "mcp-google-sheets", [],
                    {**base, "TOKEN_PATH": str(token), "DRIVE_FOLDER_ID": self.drive_folder})
        python = self.servers / "google-workspace" / "bin" / "python"
        if prefix == CALENDAR:
            keys, creds = home / "gcp-oauth.keys.json", home / "calendar-credentials.json"
            keys.write_text(credentials.oauth_client())
            creds.write_text(credentials.authorized_user())
            return python, ["-m", "decathlon.standins.google_calendar"], {
                **base, "CALENDAR_OAUTH_PATH": str(keys), "CALENDAR_CREDENTIALS_PATH": str(creds)}
        return python, ["-m", "decathlon.standins.google_forms"], {
            **base, "GOOGLE_CLIENT_ID": credentials.CLIENT_ID, "GOOGLE_CLIENT_SECRET": credentials.CLIENT_SECRET,
            "GOOGLE_REFRESH_TOKEN": credentials.REFRESH_TOKEN}


async def _load_seed(socket: Path, folder: str) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(socket))) as http:
        async with http.post("http://control/load_seed", json={"folder": folder}) as reply:
            body = await reply.json()
            if not body.get("ok"):
                raise RuntimeError(f"the workspace emulator refused the seed: {body}")


async def _calls(calls: list[Exchange], judge: Judge, servers: Servers) -> list[str]:
    answers: list[str] = []
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[str, google_mcp.Session] = {}
        for ex in calls:
            prefix = next(p for p in PREFIXES if ex.tool.startswith(p))
            if judge.why_not(ex) and CLIENT_FAILED.match(ex.answer):
                answers.append("")  # the run's client never reached the server: nothing to make again
                continue
            if prefix not in sessions:
                command, args, env = servers.launch(prefix)
                sessions[prefix] = await stack.enter_async_context(
                    google_mcp.connect(command, args, env, servers.folder))
            arguments = json.loads(judge.live(json.dumps(ex.arguments)))
            if prefix == CALENDAR:
                arguments = unmasked(arguments)
            text, failed = await google_mcp.call(sessions[prefix], ex.tool.removeprefix(prefix), arguments, 120)
            if not failed:
                judge.ids.update(learned(ex, ex.answer, text))
            answers.append(text)
    return answers


def replay_calls(calls: list[Exchange], servers: Path | None = None) -> list[Case]:
    """One run's Workspace calls replayed on fresh emulators of their own, each judged against its answer."""
    servers = servers or servers_dir()
    saas = servers / "saas" / "bin" / "python"
    seen = rebuild(calls)
    judge = Judge(seen)
    with tempfile.TemporaryDirectory(prefix="fidelity-ws-") as tmp, contextlib.ExitStack() as stop:
        root = Path(tmp)
        for name in ("workspace", "gcp", "run"):
            (root / name).mkdir()
        control = root / "workspace" / "control.sock"
        workspace = Emulator("workspace", root / "workspace", saas, args=["--control", str(control)])
        stop.callback(workspace.stop)
        gcp = Emulator("gcp", root / "gcp", saas)
        stop.callback(gcp.stop)
        write(seen, root / "workspace" / "seed", "")
        asyncio.run(_load_seed(control, "seed"))
        ports = {"workspace": workspace.ports["http"], "gcp": gcp.ports["http"]}
        front = google_mcp.FrontThread(root, ports.__getitem__)
        stop.callback(front.close)
        launch = Servers(root / "run", servers, {**front.env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
                         seen.folder)
        answers = asyncio.run(asyncio.wait_for(_calls(calls, judge, launch), 900))
    judge.ids.clear()
    # judged in order: each creation's ids hold from its own answer on
    return [judge(ex, answer) for ex, answer in zip(calls, answers)]


def replay_runs(paths: list[Path], *, servers: Path | None = None) -> list[Case]:
    cases: list[Case] = []
    for path in paths:
        calls = [ex for prefix in PREFIXES for ex in exchanges(path, prefix)]
        if calls:
            cases.extend(replay_calls(sorted(calls, key=lambda ex: ex.index), servers))
    return cases


def replay(runs: Path, **kwargs: Any) -> list[Case]:
    return replay_runs(sorted(runs.glob("*.json")), **kwargs)

