"""Cloud Resource Manager, as far as a script needs it to find its own project: v3 `projects.search` and
`projects.get`, v1 `projects.list` and `projects.get`. The credentials an emulated episode gets can see one project,
the episode's (decathlon.emulators.gcp.credentials.PROJECT_ID)."""
from __future__ import annotations

from aiohttp import web

from decathlon.emulators.gcp import credentials, errors
from decathlon.emulators.kit.errors import json_response

PROJECT_NUMBER = "100000000001"
CREATED = "2025-01-01T00:00:00.000Z"


def _v3() -> dict[str, str]:
    return {"name": f"projects/{PROJECT_NUMBER}", "parent": "organizations/100000000002",
            "projectId": credentials.PROJECT_ID, "state": "ACTIVE", "displayName": credentials.PROJECT_ID,
            "createTime": CREATED, "updateTime": CREATED, "etag": 'W/"decathlon"'}


def _v1() -> dict[str, object]:
    return {"projectNumber": PROJECT_NUMBER, "projectId": credentials.PROJECT_ID, "lifecycleState": "ACTIVE",
            "name": credentials.PROJECT_ID, "createTime": CREATED,
            "parent": {"type": "organization", "id": "100000000002"}}


async def search_v3(request: web.Request) -> web.Response:
    query = request.query.get("query", "")
    project = _v3()
    # The query language's common forms: `id:X`, `projectId:X`, `displayName:X`, `name:X`; anything else lists all.
    for term in query.split():
        key, sep, value = term.partition(":")
        if sep and key in ("id", "projectId", "displayName", "name") and value.strip("\"'*") not in (
                project["projectId"], project["displayName"], PROJECT_NUMBER):
            return json_response({})
    return json_response({"projects": [project]})


async def get_v3(request: web.Request) -> web.Response:
    name = request.match_info["project"]
    if name not in (credentials.PROJECT_ID, PROJECT_NUMBER):
        raise errors.google_error(403, "forbidden", "The caller does not have permission")
    return json_response(_v3())


async def list_v1(request: web.Request) -> web.Response:
    return json_response({"projects": [_v1()]})


async def get_v1(request: web.Request) -> web.Response:
    if request.match_info["project"] not in (credentials.PROJECT_ID, PROJECT_NUMBER):
        raise errors.google_error(403, "forbidden", "The caller does not have permission")
    return json_response(_v1())


def routes() -> list[web.RouteDef]:
    return [web.get("/v3/projects:search", search_v3), web.get("/v3/projects/{project}", get_v3),
            web.get("/v1/projects", list_v1), web.get("/v1/projects/{project}", get_v1)]
