"""The per-episode mail service (decathlon/emulators/mail) through the stdlib clients the checkout uses.

Every test starts its own service on ephemeral ports (a background-thread loop, since imaplib and
smtplib block) with a from-scratch directory, and drives it with the command patterns of the
checkout's preprocess and evaluation scripts: LOGIN with the full address, LIST, SELECT, SEARCH
ALL / criteria / CHARSET UTF-8 TEXT, FETCH (RFC822) and BODY.PEEK, STORE +FLAGS (\\Deleted) and
EXPUNGE, UID commands, COPY/MOVE, APPEND to Sent; SMTP with and without AUTH. Bad input gets the
answer a real server gives, and never takes the server down.
"""
from __future__ import annotations

import email
import imaplib
import json
import os
import signal
import smtplib
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from email import policy
from email.header import Header
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import pytest

from lines import readline
from decathlon.emulators.directory import Account, Directory
from decathlon.emulators.mail import DEFAULT_PORTS, start
from decathlon.emulators.mail.search import decoded_text_contains
from decathlon.emulators.mail.threaded import ThreadedMail, serve_in_thread

REPO = Path(__file__).resolve().parents[1]
EPHEMERAL = {"imap": 0, "smtp": 0, "smtp-mx": 0}
FIXED_NOW = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)

WREN = Account(1, "Wren", "Halloway", "Wren Halloway", "wren.h@mcp.com", "quill-7Arrow")
OSKAR = Account(2, "Oskar", "Penn", "Oskar Penn", "openn@mcp.com", "penn%2024")
LIV = Account(3, "Liv", "Marsh", "Liv Marsh", "liv_marsh@mcp.com", "marsh!Fen")
DIRECTORY = Directory("mcp.com", (WREN, OSKAR, LIV))


@pytest.fixture
def mail() -> Iterator[ThreadedMail]:
    with serve_in_thread(DIRECTORY, ports=EPHEMERAL, clock=lambda: FIXED_NOW) as running:
        yield running


def imap_login(mail: ThreadedMail, account: Account = OSKAR) -> imaplib.IMAP4:
    conn = imaplib.IMAP4("127.0.0.1", mail.imap_port, timeout=10)
    conn.login(account.email, account.password)
    return conn


def smtp(mail: ThreadedMail, account: Account | None = None) -> smtplib.SMTP:
    conn = smtplib.SMTP("127.0.0.1", mail.smtp_port, timeout=10)
    if account is not None:
        conn.login(account.email, account.password)
    return conn


def send(mail: ThreadedMail, to: list[str], subject: str, body: str = "hello", sender: Account = WREN) -> None:
    msg = MIMEText(body, "plain", "utf-8")
    msg["Subject"], msg["From"], msg["To"] = subject, sender.email, ", ".join(to)
    with smtp(mail, sender) as conn:
        assert conn.send_message(msg, to_addrs=to) == {}


def folder_names(conn: imaplib.IMAP4) -> list[str]:
    typ, data = conn.list()
    assert typ == "OK"
    return [line.decode().rsplit(" ", 1)[1].strip('"') for line in data]


def search(conn: imaplib.IMAP4, *criteria: str | bytes, charset: str | None = None) -> list[int]:
    typ, data = conn.search(charset, *criteria)
    assert typ == "OK", data
    return [int(n) for n in data[0].split()]


def fetch_message(conn: imaplib.IMAP4, num: int | str) -> email.message.EmailMessage:
    typ, data = conn.fetch(str(num), "(RFC822)")
    assert typ == "OK"
    # imaplib hands back every pending FETCH reply (flag updates too); the literal is the tuple
    (raw,) = [item[1] for item in data if isinstance(item, tuple)]
    return email.message_from_bytes(raw, policy=policy.default)


# --- accounts and folders ---------------------------------------------------------------------

def test_every_mail_account_logs_in_with_its_full_address_and_has_poste_folders(mail):
    for account in DIRECTORY.mail_accounts:  # the users, the Canvas admins, Poste's own admin
        conn = imap_login(mail, account)
        assert folder_names(conn) == ["INBOX", "Sent", "Drafts", "Trash", "Junk"]
        typ, subscribed = conn.lsub()
        assert typ == "OK" and len(subscribed) == 5
        for folder in ("INBOX", "Sent", "Drafts", "Trash", "Junk", "inbox"):
            typ, data = conn.select(folder)
            assert (typ, data) == ("OK", [b"0"]), folder
        conn.logout()


@pytest.mark.parametrize("login,password", [
    (OSKAR.email, "wrong"), ("nobody@mcp.com", "x"), ("openn", OSKAR.password), (OSKAR.email, "")])
def test_imap_login_failures_are_no_authenticationfailed(mail, login, password):
    conn = imaplib.IMAP4("127.0.0.1", mail.imap_port, timeout=10)
    with pytest.raises(imaplib.IMAP4.error, match="AUTHENTICATIONFAILED"):
        conn.login(login, password)
    conn.login(OSKAR.email, OSKAR.password)  # the same connection may try again
    assert conn.select("INBOX")[0] == "OK"
    conn.logout()


def test_plain_connection_offers_login_and_no_starttls(mail):
    conn = imaplib.IMAP4("127.0.0.1", mail.imap_port, timeout=10)
    assert "STARTTLS" not in conn.capabilities and "LOGINDISABLED" not in conn.capabilities
    assert "AUTH=PLAIN" in conn.capabilities
    conn.logout()
    with smtp(mail) as s:
        s.ehlo()
        assert s.has_extn("auth") and not s.has_extn("starttls")
        assert int(s.esmtp_features["size"]) == 25 * 1024 * 1024


# --- SMTP delivery ----------------------------------------------------------------------------

def test_smtp_delivers_one_copy_to_each_local_recipient_with_trace_headers(mail):
    msg = MIMEMultipart()
    msg["Subject"], msg["From"], msg["To"], msg["Cc"] = "Lab schedule", WREN.email, OSKAR.email, LIV.email
    msg.attach(MIMEText("Tuesday at nine", "plain", "utf-8"))
    with smtp(mail, WREN) as conn:
        refused = conn.send_message(msg, to_addrs=[OSKAR.email, LIV.email, "OPENN@MCP.COM"])
    assert refused == {}
    for account in (OSKAR, LIV):
        (raw,) = mail.messages(account.email)
        parsed = email.message_from_bytes(raw, policy=policy.default)
        assert parsed["Subject"] == "Lab schedule"
        assert parsed["Return-Path"] == f"<{WREN.email}>" and parsed["Delivered-To"] == account.email
        assert "by mcp.com with ESMTPA" in parsed["Received"]
        assert parsed["Received"].endswith("Mon, 02 Mar 2026 09:00:00 +0000")
        # The client sent no Date or Message-ID: the MTA adds them (one Message-ID for all recipients).
        assert parsed["Date"] == "Mon, 02 Mar 2026 09:00:00 +0000"
        assert parsed["Message-ID"] == "<00000001@mcp.com>"
    # Delivery puts nothing in the sender's Sent: clients APPEND their own copy (emails-mcp does).
    assert mail.messages(WREN.email, "Sent") == [] and mail.messages(WREN.email) == []


def test_a_date_and_message_id_the_client_sent_are_kept(mail):
    with smtp(mail) as conn:
        conn.sendmail(WREN.email, [OSKAR.email], "Date: Tue, 14 Oct 2025 23:00:28 +0800\r\n"
                      "Message-Id: <hw2@student.mcp.com>\r\nSubject: HW\r\n\r\nx")
    parsed = email.message_from_bytes(mail.messages(OSKAR.email)[0], policy=policy.default)
    assert parsed.get_all("Date") == ["Tue, 14 Oct 2025 23:00:28 +0800"]
    assert parsed.get_all("Message-ID") == ["<hw2@student.mcp.com>"]


def test_unauthenticated_submission_reaches_local_mailboxes(mail):
    # course-assistant and canvas-art-manager send with use_auth=False, as senders from other domains.
    with smtp(mail) as conn:
        conn.sendmail("grader@student.mcp.com", [OSKAR.email], "From: grader@student.mcp.com\r\nSubject: HW2\r\n\r\nx")
    (raw,) = mail.messages(OSKAR.email)
    assert b"Subject: HW2" in raw and b"with ESMTP id" in raw


def test_outside_recipients_are_accepted_and_dropped(mail):
    with smtp(mail) as conn:  # emails-mcp never authenticates; upstream relays for local networks
        assert conn.sendmail(WREN.email, ["ops@company.com", OSKAR.email], "Subject: out\r\n\r\nx") == {}
    assert len(mail.messages(OSKAR.email)) == 1
    assert mail.service.smtp.handler.dropped == [(WREN.email, ("ops@company.com",))]


def test_unknown_local_recipient_is_550_and_the_others_still_get_it(mail):
    with smtp(mail, WREN) as conn:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            conn.sendmail(WREN.email, ["ghost@mcp.com"], "Subject: x\r\n\r\nx")
        code, text = refused.value.recipients["ghost@mcp.com"]
        assert code == 550 and b"5.1.1" in text and b"User unknown" in text
        assert conn.sendmail(WREN.email, ["ghost@mcp.com", LIV.email], "Subject: y\r\n\r\ny") == {
            "ghost@mcp.com": (550, text)}
    assert [b"Subject: y" in m for m in mail.messages(LIV.email)] == [True]


@pytest.mark.parametrize("address", ["not-an-address", "two@@mcp.com", "liv@localhost", "a b@mcp.com"])
def test_malformed_recipient_is_refused_with_a_5xx(mail, address):
    with smtp(mail, WREN) as conn:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            conn.sendmail(WREN.email, [address], "Subject: x\r\n\r\nx")
        code, _ = next(iter(refused.value.recipients.values()))
        assert code in (501, 553)
        assert conn.noop()[0] == 250  # the session carries on


def test_wrong_smtp_password_is_535_and_the_session_survives(mail):
    with smtp(mail) as conn:
        with pytest.raises(smtplib.SMTPAuthenticationError) as failed:
            conn.login(WREN.email, "guess")
        assert failed.value.smtp_code == 535
        conn.login(WREN.email, WREN.password)


def test_oversized_message_is_552_and_the_connection_stays_usable():
    with serve_in_thread(DIRECTORY, ports=EPHEMERAL, max_message_bytes=64 * 1024) as small:
        big = MIMEMultipart()
        big["Subject"], big["From"], big["To"] = "scan", WREN.email, OSKAR.email
        big.attach(MIMEText("see attachment"))
        big.attach(MIMEApplication(os.urandom(80 * 1024), Name="scan.pdf"))
        with smtp(small, WREN) as conn:
            with pytest.raises(smtplib.SMTPSenderRefused) as refused:  # SIZE= in MAIL FROM is over the limit
                conn.send_message(big)
            assert refused.value.smtp_code == 552
            conn.rset()
            # A client that does not announce the size gets 552 after DATA instead.
            conn.ehlo()
            conn.esmtp_features.pop("size")
            with pytest.raises(smtplib.SMTPDataError) as data_error:
                conn.sendmail(WREN.email, [OSKAR.email], big.as_bytes())
            assert data_error.value.smtp_code == 552
            assert conn.sendmail(WREN.email, [OSKAR.email], "Subject: small\r\n\r\nok") == {}
        assert [b"Subject: small" in m for m in small.messages(OSKAR.email)] == [True]
        imap = imap_login(small)
        imap.select("INBOX")
        with pytest.raises(imaplib.IMAP4.error, match="APPEND"):  # BAD, over APPENDLIMIT
            imap.append("INBOX", None, None, b"Subject: huge\r\n\r\n" + b"x" * (70 * 1024))
        assert search(imap, "ALL") == [1]  # the connection is still in step
        imap.logout()


def test_malformed_messages_are_stored_as_given_and_fetchable(mail):
    garbage = b"\x00\xff no header line at all\r\n\r\n\x80\x81 binary \xfe"
    broken_mime = (b"Subject: broken\r\nContent-Type: multipart/mixed; boundary=\"zz\"\r\n\r\n"
                   b"--zz\r\nContent-Type: text/plain\r\n\r\nunterminated part")
    long_line = b"Subject: long\r\n\r\n" + b"word " * 4000  # one 20 kB line, as an unwrapped body
    with smtp(mail) as conn:
        for raw in (garbage, broken_mime, long_line):
            assert conn.sendmail(WREN.email, [OSKAR.email], raw) == {}
    conn = imap_login(mail)
    conn.select("INBOX")
    assert search(conn, "ALL") == [1, 2, 3]
    for num in (1, 2, 3):
        typ, data = conn.fetch(str(num), "(RFC822)")
        # smtplib ends the DATA with CRLF when the message does not
        assert typ == "OK" and data[0][1].endswith((garbage, broken_mime, long_line)[num - 1] + b"\r\n")
    assert search(conn, "TEXT", '"unterminated"') == [2]
    conn.logout()


# --- IMAP: the checkout's command patterns ---------------------------------------------------

def test_clear_folder_pattern_store_all_deleted_then_expunge(mail):
    for n in range(3):
        send(mail, [OSKAR.email], f"note {n}")
    conn = imap_login(mail)
    assert conn.select("INBOX") == ("OK", [b"3"])
    assert search(conn, "ALL") == [1, 2, 3]
    assert conn.store("1:*", "+FLAGS.SILENT", r"(\Deleted)")[0] == "OK"
    assert conn.expunge()[0] == "OK"
    assert search(conn, "ALL") == []
    # Dovecot's answer to a message set in an empty mailbox, which the checkout's ops.clear_folder
    # avoids by searching first.
    with pytest.raises(imaplib.IMAP4.error, match="Invalid messageset"):
        conn.store("1:*", "+FLAGS.SILENT", r"(\Deleted)")
    conn.close()
    conn.logout()


def test_per_message_delete_loop_over_inbox_and_sent(mail):
    send(mail, [OSKAR.email], "a")
    send(mail, [OSKAR.email], "b")
    conn = imap_login(mail)
    conn.append("Sent", r"(\Seen)", None, b"From: openn@mcp.com\r\nSubject: mine\r\n\r\nx")
    for folder in ("INBOX", "Sent"):
        assert conn.select(folder)[0] == "OK"
        for num in conn.search(None, "ALL")[1][0].split():
            assert conn.store(num, "+FLAGS", "\\Deleted")[0] == "OK"
        conn.expunge()
        assert search(conn, "ALL") == []
    conn.logout()
    assert mail.messages(OSKAR.email) == [] and mail.messages(OSKAR.email, "Sent") == []


def test_search_criteria_the_scripts_use(mail):
    send(mail, [OSKAR.email], "nlp-course-emergency", sender=WREN)
    send(mail, [OSKAR.email], "Weekly digest", sender=LIV)
    conn = imap_login(mail)
    conn.select("INBOX")
    today = FIXED_NOW.strftime("%d-%b-%Y")
    assert search(conn, "SUBJECT", '"nlp-course-emergency"') == [1]
    assert search(conn, 'SUBJECT "digest"') == [2]
    assert search(conn, f'(FROM "{LIV.email}")') == [2]
    assert search(conn, f'(FROM "{WREN.email}" SINCE {today})') == [1]
    assert search(conn, f'(SINCE "{today}")') == [1, 2]
    assert search(conn, f'(BEFORE "{today}")') == []
    assert search(conn, '(OR SUBJECT "digest" FROM "wren.h")') == [1, 2]
    assert search(conn, "UNSEEN") == [1, 2]
    fetch_message(conn, 1)  # FETCH (RFC822) sets \Seen, as in Dovecot
    assert search(conn, "UNSEEN") == [2] and search(conn, "SEEN") == [1]
    conn.logout()


def test_text_search_sees_decoded_bodies_and_headers(mail):
    # emails-mcp searches with `SEARCH CHARSET UTF-8 TEXT "<query>"`; Python's MIMEText(..., "utf-8")
    # base64-encodes the body and Header() RFC 2047-encodes the subject: Dovecot decodes both.
    msg = MIMEMultipart("alternative")
    msg["Subject"] = Header("Prüfungstermin verschoben", "utf-8")
    msg["From"], msg["To"] = WREN.email, OSKAR.email
    msg.attach(MIMEText("The oral exam moves to Thursday, Raum 4.12 — bitte bestätigen.", "plain", "utf-8"))
    msg.attach(MIMEText("<p>The <b>oral exam</b> moves</p>", "html", "utf-8"))
    with smtp(mail, WREN) as conn:
        conn.send_message(msg)
    send(mail, [OSKAR.email], "unrelated", body="nothing to see")
    conn = imap_login(mail)
    conn.select("INBOX")
    assert search(conn, b'TEXT "thursday"', charset="UTF-8") == [1]
    assert search(conn, 'TEXT "bestätigen"'.encode(), charset="UTF-8") == [1]
    assert search(conn, 'TEXT "PRÜFUNGSTERMIN"'.encode(), charset="UTF-8") == [1]
    assert search(conn, b'BODY "oral exam"') == [1]
    assert search(conn, b'TEXT "no such words"', charset="UTF-8") == []
    assert search(conn, '(OR SUBJECT "unrelated" FROM "nobody")') == [2]
    conn.logout()


def test_body_peek_leaves_seen_alone_and_rfc822_sets_it(mail):
    send(mail, [OSKAR.email], "peek")
    conn = imap_login(mail)
    conn.select("INBOX")
    typ, data = conn.fetch("1", "(BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)])")
    assert typ == "OK" and b"Subject: peek" in data[0][1]
    assert conn.fetch("1", "(FLAGS)")[1][0].count(b"\\Seen") == 0
    typ, data = conn.fetch("1", "(BODY.PEEK[TEXT])")
    assert b"aGVsbG8=" in data[0][1]  # "hello", base64 as sent
    conn.fetch("1", "(RFC822)")
    assert b"\\Seen" in conn.fetch("1", "(FLAGS)")[1][0]
    conn.logout()


def test_uid_search_fetch_store_copy_and_move(mail):
    for subject in ("one", "two", "three"):
        send(mail, [OSKAR.email], subject)
    conn = imap_login(mail)
    conn.select("INBOX")
    uids = conn.uid("SEARCH", None, "ALL")[1][0].split()
    assert len(uids) == 3 and [int(u) for u in uids] == sorted(int(u) for u in uids)
    typ, data = conn.uid("FETCH", uids[1], "(RFC822)")
    assert typ == "OK" and b"Subject: two" in data[0][1]
    assert conn.uid("STORE", uids[0], "+FLAGS", r"(\Flagged)")[0] == "OK"
    assert search(conn, "FLAGGED") == [1]
    assert conn.uid("COPY", uids[0], "Trash")[0] == "OK"
    assert conn.response("COPYUID")[1][0].split()[1] == uids[0]  # [COPYUID validity source dest]
    assert conn.uid("MOVE", uids[2], "Junk")[0] == "OK"
    assert search(conn, "ALL") == [1, 2]
    assert conn.uid("FETCH", b"999999", "(FLAGS)") == ("OK", [None])  # unknown UIDs: nothing, not an error
    assert [b"Subject: one" in m for m in mail.messages(OSKAR.email, "Trash")] == [True]
    assert [b"Subject: three" in m for m in mail.messages(OSKAR.email, "Junk")] == [True]
    conn.logout()


def test_copy_and_move_by_sequence_number(mail):
    send(mail, [OSKAR.email], "keep")
    send(mail, [OSKAR.email], "archive")
    conn = imap_login(mail)
    assert conn.create("Archive")[0] == "OK"
    conn.select("INBOX")
    assert conn.copy("1", "Archive")[0] == "OK"
    assert conn._simple_command("MOVE", "2", "Archive")[0] == "OK"
    assert search(conn, "ALL") == [1]
    assert conn.select("Archive") == ("OK", [b"2"])
    conn.logout()


def test_append_to_sent_then_read_back_like_the_evaluators(mail):
    conn = imap_login(mail)
    msg = MIMEText("Summary attached", "plain", "utf-8")
    msg["Subject"], msg["From"], msg["To"] = "Weekly report", OSKAR.email, LIV.email
    assert conn.append("Sent", "\\Seen", None, msg.as_bytes())[0] == "OK"  # what emails-mcp does after sending
    assert conn.select("Sent")[0] == "OK"
    assert search(conn, f'(SINCE "{FIXED_NOW.strftime("%d-%b-%Y")}")') == [1]
    assert fetch_message(conn, 1)["Subject"] == "Weekly report"
    typ, data = conn.fetch("1", "(INTERNALDATE FLAGS)")
    assert b'INTERNALDATE "02-Mar-2026 09:00:00 +0000"' in data[0] and b"\\Seen" in data[0]
    conn.logout()


def test_delivery_shows_up_in_a_selected_session(mail):
    conn = imap_login(mail)
    assert conn.select("INBOX") == ("OK", [b"0"])
    send(mail, [OSKAR.email], "while selected")
    conn.noop()
    assert conn.response("EXISTS")[1][-1] == b"1"
    assert fetch_message(conn, 1)["Subject"] == "while selected"
    conn.logout()


def test_folder_commands_and_their_errors(mail):
    conn = imap_login(mail)
    typ, data = conn.select("NoSuchFolder")
    assert typ == "NO" and b"NONEXISTENT" in data[0]
    assert conn.status("NoSuchFolder", "(MESSAGES)")[0] == "NO"
    assert conn.delete("NoSuchFolder")[0] == "NO"
    assert conn.create("Projects")[0] == "OK" and conn.create("Projects")[0] == "NO"
    assert conn.status("Projects", "(MESSAGES UNSEEN)") == ("OK", [b"Projects (MESSAGES 0 UNSEEN 0)"])
    conn.select("INBOX")
    send(mail, [OSKAR.email], "x")
    conn.noop()
    typ, data = conn.copy("1", "NoSuchFolder")
    assert typ == "NO" and b"TRYCREATE" in data[0]
    # Deleting the selected mailbox closes it first (Dovecot); pymap alone would hang up.
    conn.select("Projects")
    assert conn.delete("Projects")[0] == "OK"
    assert "Projects" not in folder_names(conn)
    assert conn.select("INBOX") == ("OK", [b"1"])
    conn.logout()


def test_sequence_numbers_past_the_end_are_bad_like_dovecot(mail):
    send(mail, [OSKAR.email], "only one")
    conn = imap_login(mail)
    conn.select("INBOX")
    for command in (lambda: conn.fetch("2", "(RFC822)"), lambda: conn.store("5", "+FLAGS", "\\Seen"),
                    lambda: conn.copy("1:3", "Trash")):
        with pytest.raises(imaplib.IMAP4.error, match="Invalid messageset"):
            command()
    assert conn.fetch("1:*", "(FLAGS)")[0] == "OK"
    conn.logout()


def _raw_imap(port: int, lines: list[bytes]) -> list[bytes]:
    """Send tagged command lines one at a time; return each tagged reply line."""
    replies = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        stream = sock.makefile("rb")
        stream.readline()  # greeting
        for line in lines:
            tag = line.split(b" ", 1)[0]
            sock.sendall(line + b"\r\n")
            reply = stream.readline()
            while not reply.startswith(tag + b" "):
                assert reply, "the server hung up"
                reply = stream.readline()
            replies.append(reply.rstrip(b"\r\n"))
    return replies


def test_garbage_commands_get_bad_and_the_connection_survives(mail):
    replies = _raw_imap(mail.imap_port, [
        b'a1 LOGIN "openn@mcp.com" "penn%2024"', b"a2 FROB", b"a3 SELECT", b"a4 FETCH 1 (RFC822)",
        b"a5 SEARCH (SUBJECT", b"a6 SELECT INBOX", b"a7 FETCH x:y (FLAGS)", b"a8 NOOP"])
    assert replies[0].startswith(b"a1 OK")
    for reply in replies[1:5] + replies[6:7]:
        assert reply.split()[1] == b"BAD", reply
    assert replies[5].startswith(b"a6 OK") and replies[7].startswith(b"a8 OK")


# --- service lifecycle --------------------------------------------------------------------------

def test_two_services_never_see_each_others_mail():
    with serve_in_thread(DIRECTORY, ports=EPHEMERAL) as first, serve_in_thread(DIRECTORY, ports=EPHEMERAL) as second:
        send(first, [OSKAR.email], "for the first episode")
        assert len(first.messages(OSKAR.email)) == 1 and second.messages(OSKAR.email) == []


def test_close_ends_open_sessions_and_frees_the_ports():
    with serve_in_thread(DIRECTORY, ports=EPHEMERAL) as running:
        imap = imap_login(running)
        smtp_conn = smtp(running)
        ports = dict(running.service.ports)
    with pytest.raises((imaplib.IMAP4.abort, OSError)):
        imap.select("INBOX")
    with pytest.raises((smtplib.SMTPServerDisconnected, OSError)):
        smtp_conn.noop()
    imap.shutdown()
    smtp_conn.close()
    for port in ports.values():
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_large_directory_makes_folders_only_for_the_accounts_in_use():
    # Toolathlon's directory has 500+ mailboxes; making each one's folders up front would dominate start-up.
    crowd = Directory("mcp.com", tuple(Account(n, "P", f"N{n}", f"P N{n}", f"p{n}@mcp.com", f"pw{n}")
                                       for n in range(1, 601)))
    with serve_in_thread(crowd, ports=EPHEMERAL) as running:
        made = running.service.store.config.set_cache
        assert made == {}
        conn = imaplib.IMAP4("127.0.0.1", running.imap_port, timeout=10)
        conn.login("p600@mcp.com", "pw600")
        assert folder_names(conn) == ["INBOX", "Sent", "Drafts", "Trash", "Junk"]
        conn.logout()
        with smtp(running) as s:
            s.sendmail("p1@mcp.com", ["p17@mcp.com"], "Subject: hi\r\n\r\nx")
        assert sorted(made) == ["p17@mcp.com", "p600@mcp.com"]
        assert len(running.messages("p17@mcp.com")) == 1


def test_unknown_port_name_is_refused_before_binding():
    import asyncio
    with pytest.raises(ValueError, match="pop3"):
        asyncio.run(start(DIRECTORY, ports={"pop3": 0}))
    assert DEFAULT_PORTS == {"imap": 1143, "smtp": 1587, "smtp-mx": 2525}


def test_decoded_text_contains_unit():
    raw = MIMEText("Grüße aus Köln", "plain", "utf-8").as_bytes()
    assert decoded_text_contains(raw, "KÖLN") and not decoded_text_contains(raw, "Berlin")
    assert decoded_text_contains(b"\xff\xfe not mime", "not mime")
    assert not decoded_text_contains(b"", "x")


def _users_root(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    users = [{"id": a.id, "first_name": a.first_name, "last_name": a.last_name, "full_name": a.full_name,
              "email": a.email, "password": a.password} for a in (WREN, OSKAR)]
    (tmp_path / "configs" / "users_data.json").write_text(json.dumps({"domain": "mcp.com", "users": users}))
    return tmp_path


def _python_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def test_cli_prints_ready_serves_and_exits_0_on_sigterm(tmp_path):
    with subprocess.Popen([sys.executable, "-m", "decathlon.emulators.mail", "--root", str(_users_root(tmp_path)),
                           "--port", "imap=0", "--port", "smtp=0", "--port", "smtp-mx=0"], cwd=REPO, env=_python_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            word, name, ports_json = readline(proc).split(" ", 2)
            ports = json.loads(ports_json)
            assert (word, name, set(ports)) == ("ready", "mail", {"imap", "smtp", "smtp-mx"}) and all(ports.values())
            conn = imaplib.IMAP4("127.0.0.1", ports["imap"], timeout=10)
            conn.login(OSKAR.email, OSKAR.password)
            conn.logout()
            with smtplib.SMTP("127.0.0.1", ports["smtp"], timeout=10) as s:
                assert s.sendmail(WREN.email, [OSKAR.email], "Subject: cli\r\n\r\nx") == {}
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
            assert proc.stdout.read() == ""  # exactly one line on stdout
        finally:
            proc.kill()


@pytest.mark.parametrize("args,code,message", [
    (["--root", "{missing}"], 2, "users_data.json is missing"),
    (["--root", "{root}", "--port", "pop3=1"], 2, "--port takes NAME=N with NAME one of imap, smtp, smtp-mx"),
])
def test_cli_bad_input_is_a_clear_error(tmp_path, args, code, message):
    (tmp_path / "ok").mkdir()
    root = _users_root(tmp_path / "ok")
    argv = [a.format(missing=tmp_path / "nowhere", root=root) for a in args]
    proc = subprocess.run([sys.executable, "-m", "decathlon.emulators.mail", *argv], cwd=REPO, env=_python_env(),
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == code and message in proc.stderr and proc.stdout == ""


def test_cli_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "decathlon.emulators.mail", "--root", str(_users_root(tmp_path)),
                               "--port", f"imap={port}", "--port", "smtp=0", "--port", "smtp-mx=0"], cwd=REPO, env=_python_env(),
                              capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "cannot listen" in proc.stderr and proc.stdout == ""


def test_cli_starts_to_ready_and_stops_three_times_over_one_root(tmp_path):
    # How fast it gets there is bench/bench_budgets.py's to say (target 0.3 s, budget 1.5 s): a wall-clock bound
    # here failed on a loaded CI machine for no fault of the emulator.
    root = _users_root(tmp_path)
    for _ in range(3):
        with subprocess.Popen([sys.executable, "-m", "decathlon.emulators.mail", "--root", str(root),
                               "--port", "imap=0", "--port", "smtp=0", "--port", "smtp-mx=0"], cwd=REPO, env=_python_env(),
                              stdout=subprocess.PIPE, text=True) as proc:
            assert readline(proc).startswith("ready mail ")
            proc.terminate()
            assert proc.wait(timeout=10) == 0
