"""The fake's HTTP surface: the REST control plane under /api/v1 and a per-sandbox gateway under /gw
(auth tokens, file upload/download, Connect-RPC exec), plus /_fake/* for tests to read counters and
to kill a sandbox from outside."""
from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fakes.prime.execsvc import START_PATH, CommandService
from fakes.prime.state import FakeSandbox, Registry

API = "/api/v1"


def _err(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status)


class FakePrime:
    def __init__(self, registry: Registry, zygote: str | None = None) -> None:
        self.reg = registry
        self.commands = CommandService(registry, zygote)
        self.base_url = ""  # set once the port is known: the gateway URL handed out in auth replies
        self.rest = Starlette(routes=[
            Route(f"{API}/sandbox", self.create, methods=["POST"]),
            Route(f"{API}/sandbox", self.list, methods=["GET"]),
            Route(f"{API}/sandbox", self.bulk_delete, methods=["DELETE"]),
            Route(f"{API}/sandbox/status:batchGet", self.statuses, methods=["POST"]),
            Route(f"{API}/sandbox/{{sid}}", self.get, methods=["GET"]),
            Route(f"{API}/sandbox/{{sid}}", self.delete, methods=["DELETE"]),
            Route(f"{API}/sandbox/{{sid}}/auth", self.auth, methods=["POST"]),
            Route(f"{API}/sandbox/{{sid}}/error-context", self.error_context, methods=["GET"]),
            Route(f"{API}/sandbox/{{sid}}/logs", self.logs, methods=["GET"]),
            Route("/gw/{sid}/{job}/upload", self.upload, methods=["POST"]),
            Route("/gw/{sid}/{job}/download", self.download, methods=["GET"]),
            Route("/_fake/stats", self.stats, methods=["GET"]),
            Route("/_fake/kill/{sid}", self.kill, methods=["POST"]),
        ])

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            if self.reg.faults.latency_ms:
                await asyncio.sleep(self.reg.faults.latency_ms / 1000)
            path = scope["path"]
            if path.startswith(API):
                blocked = self._control_plane_fault(scope)
                if blocked is not None:
                    return await blocked(scope, receive, send)
            if path.startswith("/gw/") and path.endswith(START_PATH):
                # /gw/<sid>/<job>/command_session...: the Connect app routes on the RPC path alone.
                scope = {**scope, "path": path[path.index("/command_session."):], "root_path": ""}
                return await self.commands(scope, receive, send)
        return await self.rest(scope, receive, send)

    def _control_plane_fault(self, scope) -> Response | None:
        f, reg = self.reg.faults, self.reg
        reg.requests += 1
        headers = dict(scope.get("headers") or [])
        if not headers.get(b"authorization", b"").removeprefix(b"Bearer ").strip():
            return _err(401, "missing API key")
        if f.auth in (401, 402):
            return _err(f.auth, "unauthorized" if f.auth == 401 else "payment required")
        if f.rate429_every and reg.requests % f.rate429_every < f.rate429_burst:
            return _err(429, "rate limited")
        if f.err5xx_every and reg.requests % f.err5xx_every == 0:
            return _err(503, "service unavailable")
        return None

    def _box(self, sid: str) -> FakeSandbox | None:
        return self.reg.sandboxes.get(sid)

    async def create(self, request: Request) -> Response:
        body = await request.json()
        f = self.reg.faults
        if f.quota_after and self.reg.creates >= f.quota_after and body.get("idempotency_key") not in self.reg.by_key:
            return _err(402, "sandbox quota exceeded")
        box, new = self.reg.create(body)
        if new and f.create_lost_every and box.index % f.create_lost_every == 0:
            return _err(502, "bad gateway")  # done, but the client never hears of it
        out = box.to_json()
        out["gatewayAuth"] = self._auth_for(box)
        return JSONResponse(out)

    async def list(self, request: Request) -> Response:
        want = set(request.query_params.getlist("labels"))
        page, per = int(request.query_params.get("page", 1)), int(request.query_params.get("per_page", 50))
        rows = [b for b in self.reg.sandboxes.values() if want <= set(b.labels)
                and (request.query_params.get("is_active") != "true" or b.status not in ("TERMINATED", "DELETED"))]
        chunk = rows[(page - 1) * per: page * per]
        return JSONResponse({"sandboxes": [b.to_json() for b in chunk], "total": len(rows), "page": page,
                             "perPage": per, "hasNext": page * per < len(rows)})

    async def get(self, request: Request) -> Response:
        box = self._box(request.path_params["sid"])
        return JSONResponse(box.to_json()) if box else _err(404, "sandbox not found")

    async def statuses(self, request: Request) -> Response:
        body = await request.json()
        out, errors = [], []
        for sid in body.get("sandbox_ids") or []:
            box = self._box(sid)
            if box is None:
                errors.append({"sandbox_id": sid, "code": "NOT_FOUND", "message": "no such sandbox"})
            else:
                out.append({"sandbox_id": sid, "status": box.current_status(), "error_type": box.error_type})
        return JSONResponse({"statuses": out, "errors": errors})

    async def delete(self, request: Request) -> Response:
        box = self._box(request.path_params["sid"])
        if box is None:
            return _err(404, "sandbox not found")
        if box.delete_stuck:
            return _err(500, "delete failed")
        if box.delete_failures_left > 0:
            box.delete_failures_left -= 1
            return _err(500, "delete failed")
        await asyncio.to_thread(self.reg.terminate, box, "DELETED")
        return JSONResponse({"success": True})

    async def bulk_delete(self, request: Request) -> Response:
        body = await request.json()
        ids, labels = body.get("sandbox_ids"), set(body.get("labels") or [])
        if not ids and not labels:
            return _err(422, "sandbox_ids or labels required")
        done = []
        for box in list(self.reg.sandboxes.values()):
            if box.status in ("TERMINATED", "DELETED"):
                continue
            if (ids and box.id in ids) or (labels and labels <= set(box.labels)):
                await asyncio.to_thread(self.reg.terminate, box, "DELETED")
                done.append(box.id)
        return JSONResponse({"succeeded": done, "failed": [], "message": f"deleted {len(done)}"})

    def _auth_for(self, box: FakeSandbox) -> dict:
        expires = datetime.now(timezone.utc) + timedelta(hours=2)
        return {"gateway_url": f"{self.base_url}/gw", "user_ns": box.id, "job_id": "job",
                "token": f"tok-{box.id}", "expires_at": expires.isoformat().replace("+00:00", "Z")}

    async def auth(self, request: Request) -> Response:
        box = self._box(request.path_params["sid"])
        return JSONResponse(self._auth_for(box)) if box else _err(404, "sandbox not found")

    async def error_context(self, request: Request) -> Response:
        box = self._box(request.path_params["sid"])
        if box is None:
            return _err(404, "sandbox not found")
        status = "TERMINATED" if box.status == "DELETED" else box.current_status()
        return JSONResponse({"status": status, "errorType": box.error_type,
                             "errorMessage": f"sandbox {box.id} {status.lower()}" if box.error_type else None})

    async def logs(self, request: Request) -> Response:
        return JSONResponse({"logs": ""})

    def _gateway_box(self, request: Request) -> FakeSandbox | Response:
        box = self._box(request.path_params["sid"])
        if box is None or box.status in ("TERMINATED", "DELETED"):
            return JSONResponse({"error": "sandbox_terminated"}, 410)
        if box.current_status() != "RUNNING" or box.unreachable:
            return JSONResponse({"error": "sandbox_not_found"}, 502)
        return box

    async def upload(self, request: Request) -> Response:
        box = self._gateway_box(request)
        if isinstance(box, Response):
            return box
        form = await request.form()
        upload = form["file"]
        assert isinstance(upload, UploadFile)  # the SDK sends the file as a file part
        data = await upload.read()
        target = self.reg.map_path(box, request.query_params["path"])
        await asyncio.to_thread(_write, target, data)
        return JSONResponse({"success": True, "path": request.query_params["path"], "size": len(data),
                             "timestamp": datetime.now(timezone.utc).isoformat()})

    async def download(self, request: Request) -> Response:
        box = self._gateway_box(request)
        if isinstance(box, Response):
            return box
        target = self.reg.map_path(box, request.query_params["path"])
        try:
            data = await asyncio.to_thread(target.read_bytes)
        except OSError:
            return _err(404, "file not found")
        return Response(data, media_type="application/octet-stream")

    async def stats(self, request: Request) -> Response:
        return JSONResponse(await asyncio.to_thread(self.reg.stats))

    async def kill(self, request: Request) -> Response:
        box = self._box(request.path_params["sid"])
        if box is None:
            return _err(404, "sandbox not found")
        await asyncio.to_thread(self.reg.terminate, box, "TERMINATED", "OOM_KILLED")
        return JSONResponse({"killed": box.id, "at": time.time()})



def _write(target, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
