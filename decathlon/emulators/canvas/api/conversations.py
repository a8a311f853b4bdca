"""Conversations (Canvas inbox messages).

As in Canvas: the inbox scope holds conversations where the user has received a message (a
conversation one only sent to others is under `sent`, and the create answer says `visible: false`);
without `group_conversation`, a message to several people makes one private conversation per
recipient, reusing an existing private conversation between the same two users; a bad recipient or
an empty body is refused with a bare `[{"attribute", "message"}]` list.
"""
from __future__ import annotations

from decathlon.emulators.canvas import errors
from decathlon.emulators.canvas.http import Ctx, Reply, Routes
from decathlon.emulators.canvas.model import Conversation, ConversationMessage, ConversationParticipant, User
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()

SCOPES = ("inbox", "unread", "starred", "archived", "sent")


def _received(c: Conversation, uid: int) -> list[ConversationMessage]:
    me = c.participants[uid]
    return [m for m in c.messages if m.id in me.message_ids and m.author_id != uid]


def _authored(c: Conversation, uid: int) -> list[ConversationMessage]:
    me = c.participants[uid]
    return [m for m in c.messages if m.id in me.message_ids and m.author_id == uid]


def in_scope(c: Conversation, uid: int, scope: str) -> bool:
    me = c.participants.get(uid)
    if me is None or not me.message_ids:
        return False
    if scope == "sent":
        return bool(_authored(c, uid))
    if scope == "archived":
        return me.workflow_state == "archived"
    if scope == "starred":
        return me.starred
    if not _received(c, uid) or me.workflow_state == "archived":
        return False
    if scope == "unread":
        return me.workflow_state == "unread"
    return True


def _recipients(ctx: Ctx, raw: list[str]) -> list[User] | None:
    """Users named by ids, `course_N`, `course_N_students`/`_teachers`/`_tas`; None if any is invalid."""
    store = ctx.store
    mine = {e.course_id for e in store.user_enrollments(ctx.user.id)}
    found: dict[int, User] = {}
    for token in raw:
        token = token.strip()
        if token.isdigit():
            u = store.users.get(int(token))
            if u is None:
                return None
            shared = mine & {e.course_id for e in store.user_enrollments(u.id)}
            if not (ctx.user.admin or shared):
                return None
            found[u.id] = u
            continue
        if token.startswith("course_"):
            rest = token[7:]
            cid_text, _, group = rest.partition("_")
            cid = as_int(cid_text)
            course = store.courses.get(cid) if cid is not None else None
            if course is None or (cid not in mine and not ctx.user.admin):
                return None
            types = {"": None, "students": ("StudentEnrollment",), "teachers": ("TeacherEnrollment",),
                     "tas": ("TaEnrollment",), "observers": ("ObserverEnrollment",)}.get(group, "invalid")
            if types == "invalid":
                return None
            for e in store.course_enrollments(course.id, ("active", "invited")):
                if types is None or e.type in types:
                    if e.user_id in store.users:
                        found[e.user_id] = store.users[e.user_id]
            continue
        return None
    found.pop(ctx.user.id, None)
    return list(found.values())


def _new_conversation(ctx: Ctx, users: list[User], subject: str, context_code: str | None) -> Conversation:
    store = ctx.store
    c = Conversation(store.next_id("conversation"), subject, store.now(), context_code, private=len(users) == 1)
    for uid in [ctx.user.id, *(u.id for u in users)]:
        c.participants[uid] = ConversationParticipant(uid, "read" if uid == ctx.user.id else "unread")
    store.conversations[c.id] = c
    return c


def _add_message(ctx: Ctx, c: Conversation, body: str, recipients: list[int] | None = None,
                 attachment_ids: list[int] | None = None) -> ConversationMessage:
    store = ctx.store
    audience = [uid for uid in (recipients or c.participants) if uid in c.participants]
    ids = sorted({ctx.user.id, *audience}, key=lambda u: (u != ctx.user.id, u))
    m = ConversationMessage(store.next_id("conversation_message"), ctx.user.id, body, store.now(), ids,
                            list(attachment_ids or []))
    c.messages.append(m)
    for uid in ids:
        p = c.participants[uid]
        p.message_ids.append(m.id)
        p.deleted = False
        if uid != ctx.user.id:
            p.workflow_state = "unread"
    return m


def _private_with(ctx: Ctx, other: User) -> Conversation | None:
    for c in ctx.store.conversations.values():
        if c.private and set(c.participants) == {ctx.user.id, other.id}:
            return c
    return None


@routes.get("/api/v1/conversations")
async def list_conversations(ctx: Ctx):
    store = ctx.store
    scope = str(ctx.param("scope") or "inbox")
    if scope not in SCOPES:
        scope = "inbox"
    filters = as_str_list(ctx.param("filter"))
    found = [c for c in store.conversations.values() if in_scope(c, ctx.user.id, scope)]
    for f in filters:
        if f.startswith("user_") and f[5:].isdigit():
            found = [c for c in found if int(f[5:]) in c.participants]
        elif f.startswith("course_"):
            found = [c for c in found if c.context_code == f]

    def last(c: Conversation) -> float:
        msgs = _authored(c, ctx.user.id) if scope == "sent" else (_received(c, ctx.user.id) or _authored(c, ctx.user.id))
        return msgs[-1].created_at.timestamp() if msgs else 0.0
    found.sort(key=lambda c: (-last(c), -c.id))
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(found, lambda c: view.conversation(c, scope_visible=True))


@routes.post("/api/v1/conversations")
async def create_conversation(ctx: Ctx):
    store = ctx.store
    raw = as_str_list(ctx.param("recipients"))
    body = str(ctx.param("body") or "")
    if not raw:
        raise errors.ApiError(400, [{"attribute": "recipients", "message": "blank"}])
    if not body.strip():
        raise errors.ApiError(400, [{"attribute": "body", "message": "blank"}])
    users = _recipients(ctx, raw)
    if users is None or not users:
        raise errors.ApiError(400, [{"attribute": "recipients", "message": "invalid"}])
    subject = str(ctx.param("subject") or "")
    context_code = ctx.param("context_code")
    attachments = [i for i in (as_int(x) for x in as_str_list(ctx.param("attachment_ids"))) if i in store.files]
    group = bool(as_bool(ctx.param("group_conversation"), False)) or len(users) > 100
    force_new = bool(as_bool(ctx.param("force_new"), False))
    conversations: list[Conversation] = []
    if group and len(users) > 1:
        c = _new_conversation(ctx, users, subject, context_code)
        c.private = False
        _add_message(ctx, c, body, attachment_ids=attachments)
        conversations.append(c)
    else:
        for u in users:
            existing = None if force_new else _private_with(ctx, u)
            c = existing if existing is not None else _new_conversation(ctx, [u], subject, context_code)
            _add_message(ctx, c, body, attachment_ids=attachments)
            conversations.append(c)
    view = View(store, ctx.user, ctx.html_base)
    out = [view.conversation(c, with_messages=True, scope_visible=in_scope(c, ctx.user.id, "inbox"))
           for c in conversations]
    for item in out:
        item.pop("submissions", None)
    if str(ctx.param("mode") or "sync") == "async":
        return Reply([], 202)
    return out


def _conversation_of(ctx: Ctx) -> Conversation:
    c = ctx.store.conversations.get(ctx.id("conversation_id"))
    if c is None or ctx.user.id not in c.participants or not c.participants[ctx.user.id].message_ids:
        raise errors.not_found()
    return c


@routes.get("/api/v1/conversations/unread_count")
async def unread_count(ctx: Ctx):
    n = sum(1 for c in ctx.store.conversations.values() if in_scope(c, ctx.user.id, "unread"))
    return {"unread_count": str(n)}


@routes.get("/api/v1/conversations/{conversation_id}")
async def get_conversation(ctx: Ctx):
    c = _conversation_of(ctx)
    me = c.participants[ctx.user.id]
    if as_bool(ctx.param("auto_mark_as_read"), True) and me.workflow_state == "unread":
        me.workflow_state = "read"
    scope = str(ctx.param("scope") or "inbox")
    return View(ctx.store, ctx.user, ctx.html_base).conversation(
        c, with_messages=True, scope_visible=in_scope(c, ctx.user.id, scope if scope in SCOPES else "inbox"))


@routes.put("/api/v1/conversations/{conversation_id}")
async def update_conversation(ctx: Ctx):
    c = _conversation_of(ctx)
    me = c.participants[ctx.user.id]
    fields = ctx.param("conversation") if isinstance(ctx.param("conversation"), dict) else {}
    if fields.get("workflow_state") in ("read", "unread", "archived"):
        me.workflow_state = str(fields["workflow_state"])
    if "subscribed" in fields:
        me.subscribed = bool(as_bool(fields["subscribed"], True))
    if "starred" in fields:
        me.starred = bool(as_bool(fields["starred"], False))
    return View(ctx.store, ctx.user, ctx.html_base).conversation(c)


@routes.delete("/api/v1/conversations/{conversation_id}")
async def delete_conversation(ctx: Ctx):
    c = _conversation_of(ctx)
    out = View(ctx.store, ctx.user, ctx.html_base).conversation(c)
    me = c.participants[ctx.user.id]
    me.message_ids = []
    me.deleted = True
    out.update({"last_message": None, "last_message_at": None, "message_count": 0})
    return out


@routes.post("/api/v1/conversations/{conversation_id}/add_message")
async def add_message(ctx: Ctx):
    c = _conversation_of(ctx)
    body = str(ctx.param("body") or "")
    if not body.strip():
        raise errors.ApiError(400, [{"attribute": "body", "message": "blank"}])
    recipients = None
    raw = as_str_list(ctx.param("recipients"))
    if raw:
        users = _recipients(ctx, raw)
        if users is None:
            raise errors.ApiError(400, [{"attribute": "recipients", "message": "invalid"}])
        recipients = [u.id for u in users]
    attachments = [i for i in (as_int(x) for x in as_str_list(ctx.param("attachment_ids"))) if i in ctx.store.files]
    m = _add_message(ctx, c, body, recipients, attachments)
    view = View(ctx.store, ctx.user, ctx.html_base)
    out = view.conversation(c)
    out["messages"] = [view.message(m)]
    return out


@routes.post("/api/v1/conversations/{conversation_id}/add_recipients")
async def add_recipients(ctx: Ctx):
    c = _conversation_of(ctx)
    users = _recipients(ctx, as_str_list(ctx.param("recipients")))
    if not users:
        raise errors.ApiError(400, [{"attribute": "recipients", "message": "invalid"}])
    for u in users:
        if u.id not in c.participants:
            c.participants[u.id] = ConversationParticipant(u.id, "unread", message_ids=[m.id for m in c.messages])
    c.private = False
    return View(ctx.store, ctx.user, ctx.html_base).conversation(c, with_messages=True)


@routes.post("/api/v1/conversations/mark_all_as_read")
async def mark_all_read(ctx: Ctx):
    for c in ctx.store.conversations.values():
        p = c.participants.get(ctx.user.id)
        if p is not None and p.workflow_state == "unread":
            p.workflow_state = "read"
    return {}
