"""Forms v1 (create, get, batchUpdate, responses) and the public pages a form's links lead to: the responder's
`viewform` on docs.google.com (under the form's id or its responder id) and forms.gle's short links to it."""
from __future__ import annotations

import copy
import html

from aiohttp import web

from decathlon.emulators.kit.google import status_error
from decathlon.emulators.workspace import forms_model
from decathlon.emulators.workspace.drive.files import Drive, content
from decathlon.emulators.workspace.fields import apply_mask
from decathlon.emulators.workspace.store import FORM, Json, Workspace
from decathlon.emulators.workspace.web import BAD_JSON, answer, bad, json_body

CREATE_ONLY_TITLE = "Only info.title can be set when creating a form. To add items and change settings, use batchUpdate."


class FormsRoutes:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.drive = Drive(ws)

    def form(self, form_id: str, need: str = "reader") -> Json:
        return content(self.ws, self.ws.forms, form_id, need)

    async def create(self, request: web.Request) -> web.Response:
        body = await json_body(request, BAD_JSON)
        info: Json = body["info"] if isinstance(body.get("info"), dict) else {}
        extra = [k for k in body if k != "info"] + [k for k in info if k not in ("title", "documentTitle")]
        if extra:
            raise bad(CREATE_ONLY_TITLE)
        title = str(info.get("title") or "")
        document_title = str(info.get("documentTitle") or title or "Untitled form")
        f = self.drive.create({"name": document_title, "mimeType": FORM})
        form = self.ws.forms[f["id"]]
        form["info"] = {"title": title, "documentTitle": document_title} if title else {"documentTitle": document_title}
        return answer(form, request)

    async def get(self, request: web.Request) -> web.Response:
        return answer(self.form(request.match_info["formId"]), request)

    async def batch_update(self, request: web.Request) -> web.Response:
        form = self.form(request.match_info["formId"], "writer")
        body = await json_body(request, BAD_JSON)
        requests = body.get("requests")
        if not isinstance(requests, list):
            raise bad("Must specify at least one request.")
        work = copy.deepcopy(form)
        try:
            replies = [self._apply(work, i, r) for i, r in enumerate(requests)]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a field of the wrong type
            raise bad(f"Invalid requests: a field has a value of the wrong type ({type(exc).__name__}: {exc})") \
                from None
        work["revisionId"] = f"{int(work.get('revisionId', '0'), 16) + 1:08x}" \
            if all(c in "0123456789abcdef" for c in str(work.get("revisionId", "0"))) else work.get("revisionId")
        form.clear()
        form.update(work)
        f = self.ws.files.get(form["formId"])
        if f is not None:
            f["name"] = form.get("info", {}).get("documentTitle", f["name"])
            f["modifiedTime"] = self.ws.now()
        out: Json = {"replies": replies, "writeControl": {"requiredRevisionId": form["revisionId"]}}
        if body.get("includeFormInResponse"):
            out["form"] = form
        return answer(out, request)

    def _apply(self, form: Json, i: int, request: object) -> Json:
        if not isinstance(request, dict) or len(request) != 1:
            raise bad(f"Invalid requests[{i}]: exactly one kind of request is needed")
        (kind, body), = request.items()
        if not isinstance(body, dict):
            raise bad(f"Invalid requests[{i}].{kind}")
        items = form.setdefault("items", [])
        if kind == "createItem":
            item = copy.deepcopy(body.get("item") or {})
            where = (body.get("location") or {}).get("index")
            if not isinstance(where, int) or where < 0 or where > len(items):
                raise bad(f"Invalid requests[{i}].createItem: location.index must be within [0, {len(items)}]")
            item.setdefault("itemId", self.ws.ids.hex(8))
            question = (item.get("questionItem") or {}).get("question")
            if isinstance(question, dict):
                question.setdefault("questionId", self.ws.ids.hex(8))
            item = _as_google_writes(item)
            items.insert(where, item)
            question = (item.get("questionItem") or {}).get("question")
            reply: Json = {"createItem": {"itemId": item["itemId"]}}
            if isinstance(question, dict):
                reply["createItem"]["questionId"] = [question["questionId"]]
            return reply
        if kind in ("updateItem", "deleteItem", "moveItem"):
            where = (body.get("location") or body.get("originalLocation") or {}).get("index")
            if not isinstance(where, int) or not 0 <= where < len(items):
                raise bad(f"Invalid requests[{i}].{kind}: location.index is out of range")
            if kind == "deleteItem":
                del items[where]
            elif kind == "moveItem":
                target = (body.get("newLocation") or {}).get("index", where)
                items.insert(int(target), items.pop(where))
            else:
                _masked(items[where], body.get("item") or {}, body.get("updateMask"), i, kind)
                items[where] = _as_google_writes(items[where])
            return {}
        if kind == "updateFormInfo":
            _masked(form.setdefault("info", {}), body.get("info") or {}, body.get("updateMask"), i, kind)
            return {}
        if kind == "updateSettings":
            _masked(form.setdefault("settings", {}), body.get("settings") or {}, body.get("updateMask"), i, kind)
            return {}
        raise bad(f"Invalid JSON payload received. Unknown name \"{kind}\" at 'requests[{i}]': Cannot find field.")

    async def list_responses(self, request: web.Request) -> web.Response:
        form = self.form(request.match_info["formId"])
        responses = self.ws.responses.get(form["formId"], [])
        return answer({"responses": responses} if responses else {}, request)

    async def get_response(self, request: web.Request) -> web.Response:
        form = self.form(request.match_info["formId"])
        for r in self.ws.responses.get(form["formId"], []):
            if r.get("responseId") == request.match_info["responseId"]:
                return answer(r, request)
        raise status_error(404, "Requested entity was not found.")

    # ---- the public pages -----------------------------------------------------------------------------------------
    def _by_any_id(self, some_id: str) -> Json | None:
        if some_id in self.ws.forms:
            return self.ws.forms[some_id]
        for form in self.ws.forms.values():
            if forms_model.responder_id(form) == some_id:
                return form
        return None

    async def viewform(self, request: web.Request) -> web.Response:
        form = self._by_any_id(request.match_info["formId"])
        if form is None:
            return _page(404, "Google Forms", "<p>Sorry, the file you have requested does not exist.</p>")
        info = form.get("info") or {}
        title = html.escape(str(info.get("title") or info.get("documentTitle") or "Untitled form"))
        items = []
        for item in form.get("items") or []:
            options = ((item.get("questionItem") or {}).get("question") or {}).get("choiceQuestion", {}).get("options")
            choices = "".join(f"<li>{html.escape(str(o.get('value', '')))}</li>" for o in options or [])
            items.append(f"<div class=\"question\"><h3>{html.escape(str(item.get('title', '')))}</h3>"
                         + (f"<ul>{choices}</ul>" if choices else "") + "</div>")
        description = html.escape(str(info.get("description", "")))
        body = (f"<h1>{title}</h1><p>{description}</p>{''.join(items)}"
                f"<form action=\"https://docs.google.com/forms/d/e/{forms_model.responder_id(form)}/formResponse\" "
                "method=\"POST\"></form><footer>Google Forms</footer>")
        return _page(200, f"{title} - Google Forms", body)

    async def short_link(self, request: web.Request) -> web.StreamResponse:
        form_id = self.ws.short_links.get(request.match_info["code"])
        form = self.ws.forms.get(form_id or "")
        if form is None:
            return _page(404, "Error 404 (Not Found)", "<p>The requested URL was not found on this server.</p>")
        raise web.HTTPFound(str(form.get("responderUri")))

    async def spreadsheet_page(self, request: web.Request) -> web.Response:
        book = self.ws.sheets.get(request.match_info["spreadsheetId"])
        if book is None:
            return _page(404, "Google Sheets", "<p>Sorry, the file you have requested does not exist.</p>")
        title = html.escape(str(book.get("properties", {}).get("title", "")))
        return _page(200, f"{title} - Google Sheets", f"<h1>{title}</h1><footer>Google Sheets</footer>")

    def routes(self) -> list[web.RouteDef]:
        one = "/v1/forms/{formId}"
        return [web.post("/v1/forms", self.create), web.get(one, self.get),
                web.post(one + ":batchUpdate", self.batch_update), web.get(one + "/responses", self.list_responses),
                web.get(one + "/responses/{responseId}", self.get_response),
                web.get("/forms/d/e/{formId}/viewform", self.viewform), web.get("/forms/d/{formId}/viewform", self.viewform),
                web.get("/spreadsheets/d/{spreadsheetId}", self.spreadsheet_page),
                web.get("/spreadsheets/d/{spreadsheetId}/{rest:.*}", self.spreadsheet_page),
                web.get("/{code}", self.short_link)]


def _as_google_writes(item: Json) -> Json:
    """An item as Forms gives it back: its id first (and its question's), a default left out (proto3's JSON writes no
    `"required": false`), as the recorded runs' forms.get shows."""
    out = {k: item[k] for k in ("itemId",) if k in item}
    out.update((k, v) for k, v in item.items() if k != "itemId")
    question = (out.get("questionItem") or {}).get("question")
    if isinstance(question, dict):
        if question.get("required") is False:
            del question["required"]
        ordered = {k: question[k] for k in ("questionId", "required") if k in question}
        ordered.update((k, v) for k, v in question.items() if k not in ordered)
        out["questionItem"]["question"] = ordered
    return out


def _masked(target: Json, source: Json, mask: object, i: int, kind: str) -> None:
    if not isinstance(mask, str) or not mask:
        raise bad(f"Invalid requests[{i}].{kind}: updateMask is required")
    apply_mask(target, source, mask)


def _page(status: int, title: str, body: str) -> web.Response:
    text = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>"
            "<link rel=\"shortcut icon\" href=\"https://ssl.gstatic.com/docs/forms/device_home/android_192.png\">"
            f"</head><body>{body}<div>docs.google.com</div></body></html>")
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")
