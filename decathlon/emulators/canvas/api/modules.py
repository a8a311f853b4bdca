"""Course modules and their items."""
from __future__ import annotations

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.courses import time_field
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import ContextModule, Course, ModuleItem
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()

ITEM_TYPES = ("File", "Page", "Discussion", "Assignment", "Quiz", "SubHeader", "ExternalUrl", "ExternalTool")
REQUIREMENTS = ("must_view", "must_contribute", "must_submit", "must_mark_done", "min_score")


def module_of(ctx: Ctx, course: Course) -> ContextModule:
    m = ctx.store.modules.get(ctx.id("module_id"))
    if m is None or m.course_id != course.id or m.workflow_state == "deleted":
        raise errors.not_found()
    if m.workflow_state != "active" and not access.is_staff(ctx.store, ctx.user, course):
        raise errors.not_found()
    return m


def item_of(ctx: Ctx, m: ContextModule) -> ModuleItem:
    i = ctx.store.module_items.get(ctx.id("item_id"))
    if i is None or i.module_id != m.id:
        raise errors.not_found()
    return i


def _modules(ctx: Ctx, course: Course) -> list[ContextModule]:
    staff = access.is_staff(ctx.store, ctx.user, course)
    return sorted((m for m in ctx.store.modules.values() if m.course_id == course.id and m.workflow_state != "deleted"
                   and (staff or m.workflow_state == "active")), key=lambda m: (m.position, m.id))


def _renumber(ctx: Ctx, course: Course, moved: ContextModule, position: int | None) -> None:
    others = [m for m in _modules(ctx, course) if m.id != moved.id]
    index = len(others) if position is None else max(0, min(len(others), position - 1))
    others.insert(index, moved)
    for n, m in enumerate(others, start=1):
        m.position = n


def _apply_module(ctx: Ctx, m: ContextModule, fields: dict) -> None:
    if "name" in fields:
        m.name = str(fields["name"] or "")
    if "unlock_at" in fields:
        m.unlock_at = time_field(fields["unlock_at"], "unlock_at")
    if "require_sequential_progress" in fields:
        m.require_sequential_progress = bool(as_bool(fields["require_sequential_progress"], False))
    if "publish_final_grade" in fields:
        m.publish_final_grade = bool(as_bool(fields["publish_final_grade"], False))
    if "prerequisite_module_ids" in fields:
        m.prerequisite_module_ids = [i for i in (as_int(x) for x in as_str_list(fields["prerequisite_module_ids"]))
                                     if i is not None and i in ctx.store.modules]
    if "published" in fields:
        m.workflow_state = "active" if as_bool(fields["published"], False) else "unpublished"


@routes.get("/api/v1/courses/{course_id}/modules")
async def list_modules(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    found = _modules(ctx, course)
    term = ctx.param("search_term")
    if term:
        found = [m for m in found if str(term).lower() in m.name.lower()]
    view = View(ctx.store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(found, lambda m: view.module(m, includes))


@routes.get("/api/v1/courses/{course_id}/modules/{module_id}")
async def get_module(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).module(module_of(ctx, course), ctx.includes())


@routes.post("/api/v1/courses/{course_id}/modules")
async def create_module(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    fields = ctx.param("module") if isinstance(ctx.param("module"), dict) else {}
    if not str(fields.get("name") or "").strip():
        raise errors.invalid("name", "can't be blank", "blank")
    m = ContextModule(store.next_id("context_module"), course.id, str(fields["name"]), 0, store.now())
    _apply_module(ctx, m, fields)
    store.modules[m.id] = m
    _renumber(ctx, course, m, as_int(fields.get("position")))
    return View(store, ctx.user, ctx.html_base).module(m)


@routes.put("/api/v1/courses/{course_id}/modules/{module_id}")
async def update_module(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    m = module_of(ctx, course)
    fields = ctx.param("module") if isinstance(ctx.param("module"), dict) else {}
    _apply_module(ctx, m, fields)
    if "position" in fields:
        _renumber(ctx, course, m, as_int(fields["position"]))
    if "published" in fields:
        for i in store.module_items.values():
            if i.module_id == m.id and i.type in ("SubHeader", "ExternalUrl", "ExternalTool"):
                i.published = m.workflow_state == "active"
    return View(store, ctx.user, ctx.html_base).module(m)


@routes.delete("/api/v1/courses/{course_id}/modules/{module_id}")
async def delete_module(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    m = module_of(ctx, course)
    out = View(store, ctx.user, ctx.html_base).module(m)
    m.workflow_state = "deleted"
    out["published"] = False
    return out


# --- items ---------------------------------------------------------------------------------------

def _content_title(ctx: Ctx, course: Course, kind: str, content_id: int | None, page_url: str | None) -> str | None:
    store = ctx.store
    if kind == "Assignment":
        a = store.assignments.get(content_id or -1)
        return a.name if a and a.course_id == course.id and a.workflow_state != "deleted" else None
    if kind == "Quiz":
        q = store.quizzes.get(content_id or -1)
        return q.title if q and q.course_id == course.id and q.workflow_state != "deleted" else None
    if kind == "Discussion":
        t = store.topics.get(content_id or -1)
        return t.title if t and t.course_id == course.id and t.workflow_state != "deleted" else None
    if kind == "File":
        f = store.files.get(content_id or -1)
        return f.display_name if f and f.workflow_state != "deleted" else None
    if kind == "Page":
        for p in store.pages.values():
            if p.course_id == course.id and p.workflow_state != "deleted" and (p.url == page_url or p.id == content_id):
                return p.title
        return None
    return ""


def _content_published(ctx: Ctx, i: ModuleItem) -> bool:
    store = ctx.store
    if i.type == "Assignment" and i.content_id in store.assignments:
        return store.assignments[i.content_id].published
    if i.type == "Quiz" and i.content_id in store.quizzes:
        return store.quizzes[i.content_id].published
    if i.type == "Discussion" and i.content_id in store.topics:
        return store.topics[i.content_id].published
    if i.type == "Page":
        return any(p.published for p in store.pages.values() if p.course_id == i.course_id and p.url == i.page_url)
    if i.type == "File":
        return True
    return i.published


def _apply_item(ctx: Ctx, i: ModuleItem, fields: dict) -> None:
    if "title" in fields and fields["title"] is not None:
        i.title = str(fields["title"])
    if "indent" in fields:
        i.indent = max(0, as_int(fields["indent"], 0) or 0)
    if "new_tab" in fields:
        i.new_tab = bool(as_bool(fields["new_tab"], False))
    if "external_url" in fields:
        i.external_url = str(fields["external_url"] or "")
    req = fields.get("completion_requirement")
    if isinstance(req, dict):
        kind = req.get("type")
        if kind in REQUIREMENTS:
            i.completion_requirement = {"type": kind}
            if kind == "min_score":
                i.completion_requirement["min_score"] = req.get("min_score")
        elif kind in (None, ""):
            i.completion_requirement = None
    if "published" in fields and i.type in ("SubHeader", "ExternalUrl", "ExternalTool"):
        i.published = bool(as_bool(fields["published"], False))


@routes.get("/api/v1/courses/{course_id}/modules/{module_id}/items")
async def list_items(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    m = module_of(ctx, course)
    staff = access.is_staff(store, ctx.user, course)
    items = sorted((i for i in store.module_items.values() if i.module_id == m.id), key=lambda i: (i.position, i.id))
    for i in items:
        if i.type not in ("SubHeader", "ExternalUrl", "ExternalTool"):
            i.published = _content_published(ctx, i)
    view = View(store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged([i for i in items if staff or i.published], lambda i: view.module_item(i, includes))


@routes.get("/api/v1/courses/{course_id}/modules/{module_id}/items/{item_id}")
async def get_item(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    i = item_of(ctx, module_of(ctx, course))
    return View(ctx.store, ctx.user, ctx.html_base).module_item(i, ctx.includes())


@routes.post("/api/v1/courses/{course_id}/modules/{module_id}/items")
async def create_item(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    m = module_of(ctx, course)
    fields = ctx.param("module_item") if isinstance(ctx.param("module_item"), dict) else {}
    kind = str(fields.get("type") or "")
    if kind not in ITEM_TYPES:
        raise errors.invalid("type", "invalid", "invalid")
    content_id = as_int(fields.get("content_id"))
    page_url = str(fields["page_url"]) if fields.get("page_url") else None
    title = _content_title(ctx, course, kind, content_id, page_url)
    if title is None:
        raise errors.not_found()
    if kind in ("SubHeader", "ExternalUrl", "ExternalTool") and not str(fields.get("title") or "").strip():
        raise errors.invalid("title", "can't be blank", "blank")
    if kind == "ExternalUrl" and not str(fields.get("external_url") or "").strip():
        raise errors.invalid("external_url", "can't be blank", "blank")
    if kind == "Page" and page_url is None:
        page = next((p for p in store.pages.values() if p.id == content_id and p.course_id == course.id), None)
        page_url = page.url if page else None
    siblings = [i for i in store.module_items.values() if i.module_id == m.id]
    i = ModuleItem(store.next_id("module_item"), m.id, course.id, len(siblings) + 1, title or "", kind,
                   content_id if kind not in ("SubHeader", "ExternalUrl", "Page") else None, page_url)
    if kind == "Page":
        page = next((p for p in store.pages.values() if p.course_id == course.id and p.url == page_url), None)
        i.content_id = page.id if page else None
    _apply_item(ctx, i, fields)
    i.published = _content_published(ctx, i)
    store.module_items[i.id] = i
    position = as_int(fields.get("position"))
    if position is not None:
        ordered = sorted(siblings, key=lambda x: (x.position, x.id))
        ordered.insert(max(0, min(len(ordered), position - 1)), i)
        for n, x in enumerate(ordered, start=1):
            x.position = n
    return View(store, ctx.user, ctx.html_base).module_item(i)


@routes.put("/api/v1/courses/{course_id}/modules/{module_id}/items/{item_id}")
async def update_item(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    m = module_of(ctx, course)
    i = item_of(ctx, m)
    fields = ctx.param("module_item") if isinstance(ctx.param("module_item"), dict) else {}
    _apply_item(ctx, i, fields)
    target = as_int(fields.get("module_id"))
    if target is not None and target != m.id:
        dest = store.modules.get(target)
        if dest is None or dest.course_id != course.id:
            raise errors.not_found()
        i.module_id = dest.id
        i.position = 1 + sum(1 for x in store.module_items.values() if x.module_id == dest.id and x.id != i.id)
    if "position" in fields and as_int(fields["position"]) is not None:
        ordered = sorted((x for x in store.module_items.values() if x.module_id == i.module_id and x.id != i.id),
                         key=lambda x: (x.position, x.id))
        ordered.insert(max(0, min(len(ordered), (as_int(fields["position"]) or 1) - 1)), i)
        for n, x in enumerate(ordered, start=1):
            x.position = n
    return View(store, ctx.user, ctx.html_base).module_item(i)


@routes.delete("/api/v1/courses/{course_id}/modules/{module_id}/items/{item_id}")
async def delete_item(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    i = item_of(ctx, module_of(ctx, course))
    out = View(store, ctx.user, ctx.html_base).module_item(i)
    del store.module_items[i.id]
    return out


async def _done(ctx: Ctx, done: bool):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    i = item_of(ctx, module_of(ctx, course))
    if not (i.completion_requirement and i.completion_requirement.get("type") == "must_mark_done"):
        raise errors.bad_request("item is not marked 'must_mark_done'")
    if done:
        i.completed_by.add(ctx.user.id)
    else:
        i.completed_by.discard(ctx.user.id)
    return {}


@routes.put("/api/v1/courses/{course_id}/modules/{module_id}/items/{item_id}/done")
async def mark_done(ctx: Ctx):
    return await _done(ctx, True)


@routes.delete("/api/v1/courses/{course_id}/modules/{module_id}/items/{item_id}/done")
async def mark_undone(ctx: Ctx):
    return await _done(ctx, False)


@routes.post("/api/v1/courses/{course_id}/modules/{module_id}/items/{item_id}/mark_read")
async def mark_read(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    i = item_of(ctx, module_of(ctx, course))
    if i.completion_requirement and i.completion_requirement.get("type") == "must_view":
        i.completed_by.add(ctx.user.id)
    return {}
