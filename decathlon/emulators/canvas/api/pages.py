"""Wiki pages of a course, addressed by their URL slug (or `page_id:N`), and the front page."""
from __future__ import annotations

import re

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import Course, WikiPage
from decathlon.emulators.kit.params import as_bool
from decathlon.emulators.canvas.views import View

routes = Routes()

EDITING_ROLES = ("teachers", "students", "members", "public")


def slug(title: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s or "page"


def unique_slug(ctx: Ctx, course: Course, base: str, skip: int | None = None) -> str:
    taken = {p.url for p in ctx.store.pages.values() if p.course_id == course.id and p.workflow_state != "deleted"
             and p.id != skip}
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def page_of(ctx: Ctx, course: Course) -> WikiPage:
    key = ctx.request.match_info["url"]
    staff = access.is_staff(ctx.store, ctx.user, course)
    for p in ctx.store.pages.values():
        if p.course_id != course.id or p.workflow_state == "deleted":
            continue
        if p.url == key or (key.startswith("page_id:") and key[8:] == str(p.id)):
            if not p.published and not staff:
                raise errors.unauthorized()
            return p
    raise errors.not_found()


def _apply(ctx: Ctx, course: Course, p: WikiPage, fields: dict) -> None:
    if "title" in fields and str(fields["title"] or "").strip():
        p.title = str(fields["title"]).strip()
        p.url = unique_slug(ctx, course, slug(p.title), p.id)
    if "body" in fields:
        p.body = str(fields["body"] or "")
    if "editing_roles" in fields:
        roles = [r.strip() for r in str(fields["editing_roles"] or "").split(",") if r.strip()]
        if any(r not in EDITING_ROLES for r in roles):
            raise errors.invalid("editing_roles", "is invalid", "invalid")
        p.editing_roles = ",".join(roles) or "teachers"
    if "published" in fields:
        p.published = bool(as_bool(fields["published"], False))
    if "front_page" in fields and as_bool(fields["front_page"], False):
        for other in ctx.store.pages.values():
            if other.course_id == course.id:
                other.front_page = False
        p.front_page = True
        p.published = True
        course.front_page_url = p.url
    p.updated_at = ctx.store.now()
    p.last_edited_by = ctx.user.id
    p.workflow_state = "active" if p.published else "unpublished"


@routes.get("/api/v1/courses/{course_id}/pages")
async def list_pages(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(store, ctx.user, course)
    found = [p for p in store.pages.values() if p.course_id == course.id and p.workflow_state != "deleted"
             and (staff or p.published)]
    term = ctx.param("search_term")
    if term:
        found = [p for p in found if str(term).lower() in p.title.lower()]
    published = as_bool(ctx.param("published"))
    if published is not None:
        found = [p for p in found if p.published == published]
    sort = str(ctx.param("sort") or "title")
    keys = {"created_at": lambda p: (p.created_at, p.id), "updated_at": lambda p: (p.updated_at, p.id)}
    found.sort(key=keys.get(sort, lambda p: (p.title.lower(), p.id)))
    if str(ctx.param("order") or "asc") == "desc":
        found.reverse()
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(found, lambda p: view.page(p, with_body=False))


@routes.get("/api/v1/courses/{course_id}/pages/{url}")
async def get_page(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).page(page_of(ctx, course))


@routes.post("/api/v1/courses/{course_id}/pages")
async def create_page(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    fields = ctx.param("wiki_page") if isinstance(ctx.param("wiki_page"), dict) else {}
    title = str(fields.get("title") or "").strip()
    if not title:
        raise errors.invalid("title", "can't be blank", "blank")
    now = store.now()
    p = WikiPage(store.next_id("wiki_page"), course.id, unique_slug(ctx, course, slug(title)), title, "", now, now)
    _apply(ctx, course, p, {k: v for k, v in fields.items() if k != "title"})
    store.pages[p.id] = p
    return View(store, ctx.user, ctx.html_base).page(p)


@routes.put("/api/v1/courses/{course_id}/pages/{url}")
async def update_page(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    p = page_of(ctx, course)
    fields = ctx.param("wiki_page") if isinstance(ctx.param("wiki_page"), dict) else {}
    _apply(ctx, course, p, fields)
    return View(store, ctx.user, ctx.html_base).page(p)


@routes.delete("/api/v1/courses/{course_id}/pages/{url}")
async def delete_page(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    p = page_of(ctx, course)
    if p.front_page:
        raise errors.bad_request("The front page cannot be deleted")
    out = View(store, ctx.user, ctx.html_base).page(p, with_body=False)
    p.workflow_state = "deleted"
    return out


@routes.get("/api/v1/courses/{course_id}/front_page")
async def front_page(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    for p in store.pages.values():
        if p.course_id == course.id and p.front_page and p.workflow_state != "deleted":
            return View(store, ctx.user, ctx.html_base).page(p)
    raise errors.bad_request("No front page has been set", 404)
