"""The real emails-mcp (PyPI, Toolathlon's pin 0.1.12) against the per-episode mail service.

emails-mcp runs from its own virtualenv, $DECATHLON_SERVERS_DIR/emails (ci/install_servers.py
builds it from ci/servers/emails.txt with a Python >= 3.12), launched with the arguments of the
checkout's configs/mcp_servers/emails.yaml. The tools the recorded runs call (send_email with an
attachment, get_emails, read_email, search_emails, download_attachment), the folder tools and
import/export answer with the text shapes the recorded runs show. Skipped, saying why, only when
that virtualenv is absent, and failed instead where DECATHLON_REQUIRE_PY313=1 (CI).
"""
from __future__ import annotations

import email
import json
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from email import policy
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from conftest import need_emails_mcp
from decathlon.emulators.directory import Account, Directory
from decathlon.emulators.mail.threaded import ThreadedMail, serve_in_thread
from decathlon.sandbox.servers_config import default_servers_dir

EMAILS_MCP = default_servers_dir() / "emails" / "bin" / "emails-mcp"


@pytest.fixture(autouse=True)
def _emails_mcp_installed() -> None:
    need_emails_mcp()

MARA = Account(1, "Mara", "Quince", "Mara Quince", "mquince@mcp.com", "Quince#41")
TOBIAS = Account(2, "Tobias", "Lund", "Tobias Lund", "tobias.lund@mcp.com", "lund-Fjord9")
DIRECTORY = Directory("mcp.com", (MARA, TOBIAS))


def _config(mail: ThreadedMail, account: Account, folder: Path) -> Path:
    """An email config like the tasks' emails_config.json, on the test's ports."""
    path = folder / f"{account.login}.json"
    path.write_text(json.dumps({
        "email": account.email, "password": account.password, "name": account.full_name,
        "imap_server": "localhost", "imap_port": mail.imap_port, "smtp_server": "localhost",
        "smtp_port": mail.smtp_port, "use_ssl": False, "use_starttls": False}))
    return path


Call = Callable[..., Awaitable[str]]


@asynccontextmanager
async def _emails(mail: ThreadedMail, account: Account, workspace: Path) -> AsyncIterator[Call]:
    args = ["--attachment_download_path", str(workspace / "emails_download"),
            "--attachment_upload_path", str(workspace),
            "--email_export_path", str(workspace / "emails_export"),
            "--config_file", str(_config(mail, account, workspace.parent))]
    params = StdioServerParameters(command=str(EMAILS_MCP), args=args, cwd=str(workspace),
                                   env=get_default_environment())
    with (workspace.parent / f"{account.login}.stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def call(name: str, **arguments: object) -> str:
                result = await session.call_tool(name, arguments)
                (content,) = result.content
                return content.text

            yield call


LISTING = re.compile(r"(?:Search query: .*\n)?Folder: \w+\nPage: 1/1\nTotal (?:emails|results): (\d+)\n\n"
                     r"((?:\d+\. ID: \d+\n   Subject: .*\n   From: .*\n   Date: .*\n"
                     r"(?:   Attachments: \d+ files\n)?\n)+)")


def listing(text: str) -> list[tuple[str, str]]:
    """(id, subject) of each entry of a get_emails / search_emails answer, checking its shape."""
    match = LISTING.fullmatch(text)
    assert match, text
    entries = re.findall(r"ID: (\d+)\n   Subject: (.*)\n", match.group(2))
    assert len(entries) == int(match.group(1))
    return entries


def test_emails_mcp_round_trip(tmp_path):
    with serve_in_thread(DIRECTORY, ports={"imap": 0, "smtp": 0}) as mail:
        anyio.run(_round_trip, mail, tmp_path)


async def _round_trip(mail: ThreadedMail, tmp_path: Path) -> None:
    sender_ws, reader_ws = tmp_path / "mara" / "workspace", tmp_path / "tobias" / "workspace"
    for ws in (sender_ws, reader_ws):
        ws.mkdir(parents=True)
    (sender_ws / "minutes.md").write_text("# Minutes\n- budget approved\n")
    with anyio.fail_after(90):
        async with _emails(mail, MARA, sender_ws) as call:
            sent = await call("send_email", to=TOBIAS.email, subject="Board minutes",
                              body="Minutes attached; the budget was approved.",
                              attachments=[str(sender_ws / "minutes.md")])
            assert sent == f"Email sent successfully to {TOBIAS.email} with 1 attachments"
            lunch = await call("send_email", to=TOBIAS.email, cc=MARA.email, subject="Lunch",
                               body="plain", html_body="<p>Lunch at <b>noon</b></p>")
            assert lunch == f"Email sent successfully to {TOBIAS.email}"
            # Upstream relays outside mail (and it never arrives); recorded runs show the same line.
            assert await call("send_email", to="ap@company.com", subject="Claim", body="x") == \
                "Email sent successfully to ap@company.com"
            ghost = await call("send_email", to="ghost@mcp.com", subject="?", body="x")
            assert ghost.startswith("Error sending email:") and "550" in ghost
            sent_list = await call("get_emails", folder="Sent")
            assert [s for _, s in listing(sent_list)] == ["Claim", "Lunch", "Board minutes"]
            # emails-mcp's own Sent copy has no Date (the recorded runs list Sent with "Date: " empty)
            assert re.findall(r"   Date: (.*)\n", sent_list) == ["", "", ""]
            assert listing(await call("get_emails", folder="INBOX")) == [("1", "Lunch")]  # Mara was cc'd
            exported = await call("export_emails", folder="Sent", export_path="sent.json")
            export_path = re.fullmatch(r"Successfully exported 3 emails to (.+)", exported).group(1)
        shutil.copy(export_path, reader_ws / "sent.json")

        async with _emails(mail, TOBIAS, reader_ws) as call:
            inbox = await call("get_emails", folder="INBOX", page=1, page_size=20)
            assert listing(inbox) == [("2", "Lunch"), ("1", "Board minutes")]
            # the delivered copies carry the Date the MTA added, in UTC like the Poste container
            dates = re.findall(r"   Date: (.*)\n", inbox)
            assert len(dates) == 2, inbox
            assert all(re.fullmatch(r"\w{3}, \d{2} \w{3} \d{4} [\d:]{8} \+0000", d) for d in dates), dates
            found = await call("search_emails", query="budget")  # a base64 body: Dovecot decodes it
            assert found.startswith("Search query: budget\nFolder: INBOX\n")
            assert listing(found) == [("1", "Board minutes")]
            assert await call("search_emails", query="no-such-words") == "No emails found matching query: no-such-words"
            read = await call("read_email", email_id="1")
            assert read.startswith("Email ID: 1\nSubject: Board minutes\nFrom: ") and f"To: {TOBIAS.email}\n" in read
            assert "Text Content:\nMinutes attached; the budget was approved." in read
            assert re.search(r"Attachments:\n1\. minutes\.md \([\w/-]+, 28 bytes\)\n", read), read
            saved = await call("download_attachment", email_id="1", attachment_filename="minutes.md")
            target = reader_ws / "emails_download" / "minutes.md"
            assert saved == f"Attachment 'minutes.md' saved to: {target}"
            assert target.read_text() == "# Minutes\n- budget approved\n"
            assert "Invalid messageset" in await call("read_email", email_id="9")
            missing = await call("get_emails", folder="NoSuchFolder")
            assert missing.startswith("Error getting emails:") and "NoSuchFolder" in missing
            folders = await call("get_folders")  # listing and reading fetched RFC822: all \Seen now
            assert folders.startswith("Available folders:\n1. INBOX (2 total, 0 unread)\n2. Sent (0 total, 0 unread)\n")
            assert await call("create_folder", folder_name="Board") == "Folder 'Board' created successfully"
            await call("get_emails", folder="INBOX")
            await call("move_email", email_id="1", target_folder="Board")
            assert listing(await call("get_emails", folder="Board")) == [("1", "Board minutes")]
            assert await call("delete_folder", folder_name="Board") == "Folder 'Board' deleted successfully"
            imported = await call("import_emails", import_path=str(reader_ws / "sent.json"), target_folder="Trash",
                                  preserve_folders=False)
            assert imported == "Successfully imported 3/3 emails to Trash"
            trash = listing(await call("get_emails", folder="Trash"))
            assert [s for _, s in trash] == ["Claim", "Lunch", "Board minutes"]
    # Board minutes went to the deleted folder; Lunch is all that is left in the INBOX itself.
    (left,) = mail.messages(TOBIAS.email)
    assert email.message_from_bytes(left, policy=policy.default)["Subject"] == "Lunch"
