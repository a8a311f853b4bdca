"""A form as `forms.get` returns it, and the links Google gives it: the editor's, the responder's
(`/forms/d/e/<responder id>/viewform`) and a forms.gle short link."""
from __future__ import annotations

import copy
from typing import Any

from decathlon.emulators.workspace.links import responder_url
from decathlon.emulators.workspace.store import ID_ALPHABET, Workspace

Json = dict[str, Any]


def new_form(ws: Workspace, form_id: str, title: str, document_title: str) -> Json:
    responder = "1FAIpQLS" + ws.ids.alnum(48, ID_ALPHABET)
    form: Json = {"formId": form_id, "info": {"documentTitle": document_title},
                  "settings": {"emailCollectionType": "DO_NOT_COLLECT"},
                  "revisionId": "00000001",
                  "responderUri": responder_url(responder)}
    if title:
        form["info"] = {"title": title, "documentTitle": document_title}
    ws.forms[form_id] = form
    ws.responses[form_id] = []
    ws.short_links[ws.short_id(17)] = form_id
    return form


def copy_form(ws: Workspace, source: str, new_id: str, document_title: str) -> None:
    form = copy.deepcopy(ws.forms[source])
    fresh = new_form(ws, new_id, form.get("info", {}).get("title", ""), document_title)
    form["formId"], form["responderUri"] = new_id, fresh["responderUri"]
    form.setdefault("info", {})["documentTitle"] = document_title
    ws.forms[new_id] = form


def responder_id(form: Json) -> str:
    uri = str(form.get("responderUri", ""))
    return uri.rsplit("/d/e/", 1)[-1].split("/", 1)[0] if "/d/e/" in uri else ""
