"""Accounts and users: the root account, its users (search, create), and each user's own record."""
from __future__ import annotations

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.http import Ctx, Reply, Routes
from decathlon.emulators.canvas.model import User
from decathlon.emulators.kit.params import as_int
from decathlon.emulators.canvas.views import View

routes = Routes()

MIN_SEARCH = 2


def search_term(ctx: Ctx) -> str | None:
    term = ctx.param("search_term")
    if term is None:
        return None
    term = str(term)
    if len(term) < MIN_SEARCH:
        raise errors.ApiError(400, {"errors": [{"field": "search_term", "code": "invalid",
                                                "message": f"{MIN_SEARCH} or more characters is required"}]})
    return term


def account_of(ctx: Ctx):
    account = ctx.store.accounts.get(ctx.id("account_id"))
    if account is None:
        raise errors.not_found()
    return account


def user_of(ctx: Ctx, name: str = "user_id") -> User:
    raw = ctx.request.match_info.get(name, "")
    if raw == "self":
        return ctx.user
    uid = as_int(raw)
    user = ctx.store.users.get(uid) if uid is not None else None
    if user is None:
        raise errors.not_found()
    return user


def matches_user(u: User, term: str) -> bool:
    t = term.lower()
    return (t in u.name.lower() or t in u.login_id.lower() or (u.sis_user_id or "").lower() == t
            or str(u.id) == term or t in (u.primary_email or "").lower())


@routes.get("/api/v1/accounts")
async def list_accounts(ctx: Ctx):
    view = View(ctx.store, ctx.user, ctx.html_base)
    accounts = list(ctx.store.accounts.values()) if ctx.user.admin else []
    return ctx.paged(accounts, view.account)


@routes.get("/api/v1/course_accounts")
async def course_accounts(ctx: Ctx):
    view = View(ctx.store, ctx.user, ctx.html_base)
    has_staff = any(e.type != "StudentEnrollment" for e in ctx.store.user_enrollments(ctx.user.id))
    return ctx.paged(list(ctx.store.accounts.values()) if has_staff or ctx.user.admin else [], view.account)


@routes.get("/api/v1/accounts/{account_id}")
async def get_account(ctx: Ctx):
    account = account_of(ctx)
    access.require_admin(ctx.user)
    return View(ctx.store, ctx.user, ctx.html_base).account(account)


@routes.get("/api/v1/accounts/{account_id}/sub_accounts")
async def sub_accounts(ctx: Ctx):
    account_of(ctx)
    access.require_admin(ctx.user)
    return ctx.paged([])


@routes.get("/api/v1/accounts/{account_id}/reports")
async def account_reports(ctx: Ctx):
    account_of(ctx)
    access.require_admin(ctx.user)
    return ctx.paged([])


@routes.get("/api/v1/accounts/{account_id}/scopes")
async def account_scopes(ctx: Ctx):
    account_of(ctx)
    access.require_admin(ctx.user)
    return []


@routes.get("/api/v1/accounts/{account_id}/terms")
async def account_terms(ctx: Ctx):
    from decathlon.emulators.canvas.views import TERM
    account_of(ctx)
    access.require_admin(ctx.user)
    return {"enrollment_terms": [dict(TERM, sis_term_id=None, sis_import_id=None)]}


@routes.get("/api/v1/accounts/{account_id}/users")
async def account_users(ctx: Ctx):
    account_of(ctx)
    access.require_admin(ctx.user)
    term = search_term(ctx)
    users = [u for u in ctx.store.users.values() if term is None or matches_user(u, term)]
    etype = ctx.param("enrollment_type")
    if etype:
        wanted = {"student": "StudentEnrollment", "teacher": "TeacherEnrollment", "ta": "TaEnrollment",
                  "observer": "ObserverEnrollment", "designer": "DesignerEnrollment"}.get(str(etype).lower())
        users = [u for u in users if any(e.type == wanted for e in ctx.store.user_enrollments(u.id))]
    sort = str(ctx.param("sort", "username"))
    keys = {"email": lambda u: (u.login_id.lower(), u.id), "sis_id": lambda u: ((u.sis_user_id or "").lower(), u.id),
            "last_login": lambda u: (0, u.id), "id": lambda u: (u.id,)}
    users.sort(key=keys.get(sort, lambda u: (u.sortable_name.lower(), u.id)))
    if str(ctx.param("order", "asc")).lower() == "desc":
        users.reverse()
    view = View(ctx.store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(users, lambda u: view.user(u, includes))


@routes.post("/api/v1/accounts/{account_id}/users")
async def create_user(ctx: Ctx):
    account_of(ctx)
    access.require_admin(ctx.user)
    user_p = ctx.param("user") if isinstance(ctx.param("user"), dict) else {}
    pseudo = ctx.param("pseudonym") if isinstance(ctx.param("pseudonym"), dict) else {}
    unique_id = str(pseudo.get("unique_id") or "").strip()
    if not unique_id:
        raise _user_error("unique_id", "too_short", "login is too short")
    if ctx.store.user_by_login(unique_id) is not None:
        raise _user_error("unique_id", "taken", "ID already in use for this account and authentication provider")
    sis = pseudo.get("sis_user_id")
    if sis and any(u.sis_user_id == str(sis) for u in ctx.store.users.values()):
        raise _user_error("sis_user_id", "taken", f"The SIS ID {sis} is already in use")
    name = str(user_p.get("name") or unique_id)
    user = ctx.store.add_user(name, unique_id, short_name=user_p.get("short_name") or None,
                              sortable_name=user_p.get("sortable_name") or None,
                              sis_user_id=str(sis) if sis else None, password=str(pseudo.get("password") or ""))
    if user_p.get("time_zone"):
        user.time_zone = str(user_p["time_zone"])
    channel = ctx.param("communication_channel")
    if isinstance(channel, dict) and channel.get("address"):
        user.primary_email = str(channel["address"])
    return View(ctx.store, ctx.user, ctx.html_base).user(user)


def _user_error(attribute: str, kind: str, message: str) -> errors.ApiError:
    return errors.ApiError(400, {"errors": {"user": {}, "pseudonym": {
        attribute: [{"attribute": attribute, "type": kind, "message": message}]}, "observee": {}, "pairing_code": {},
        "recaptcha": None}})


@routes.get("/api/v1/users/{user_id}")
async def get_user(ctx: Ctx):
    user = user_of(ctx)
    view = View(ctx.store, ctx.user, ctx.html_base)
    if user.id == ctx.user.id:
        return view.self_user(user)
    if not ctx.user.admin:
        raise errors.unauthorized()
    return view.self_user(user)


@routes.put("/api/v1/users/{user_id}")
async def update_user(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    fields = ctx.param("user") if isinstance(ctx.param("user"), dict) else {}
    for key in ("name", "short_name", "sortable_name", "time_zone", "locale", "bio", "title", "pronouns"):
        if key in fields and fields[key] is not None:
            setattr(user, key, str(fields[key]))
    return View(ctx.store, ctx.user, ctx.html_base).self_user(user)


@routes.get("/api/v1/users/{user_id}/profile")
async def get_profile(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return View(ctx.store, ctx.user, ctx.html_base).profile(user)


@routes.get("/api/v1/users/{user_id}/avatars")
async def avatars(ctx: Ctx):
    user = user_of(ctx)
    return [{"type": "no_pic", "display_name": "None", "url": user.avatar_url}]


@routes.get("/api/v1/users/self/todo")
async def todo(ctx: Ctx):
    return ctx.paged([])


@routes.get("/api/v1/users/{user_id}/activity_stream")
async def activity_stream(ctx: Ctx):
    user_of(ctx)
    return ctx.paged([])


@routes.get("/api/v1/users/{user_id}/activity_stream/summary")
async def activity_summary(ctx: Ctx):
    user_of(ctx)
    return []


@routes.get("/api/v1/users/{user_id}/colors")
async def colors(ctx: Ctx):
    user_of(ctx)
    return {"custom_colors": {}}


@routes.get("/api/v1/users/{user_id}/settings")
async def settings(ctx: Ctx):
    user_of(ctx)
    return Reply({"manual_mark_as_read": False, "release_notes_badge_disabled": False,
                  "collapse_global_nav": False, "hide_dashcard_color_overlays": False,
                  "comment_library_suggestions_enabled": False, "elementary_dashboard_disabled": False})
