"""The OAuth2 token endpoint (`POST /token`, oauth2.googleapis.com): service-account JWT-bearer assertions and
refresh-token grants. Google's signature semantics cannot be checked offline; a well-formed JWT is enough."""
from __future__ import annotations

import base64
import json
from typing import Any

from aiohttp import web

from decathlon.emulators.kit.errors import json_response
from decathlon.emulators.kit.ids import Ids

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def _oauth_error(error: str, description: str, status: int = 400) -> web.Response:
    return json_response({"error": error, "error_description": description}, status)


def _jwt_claims(assertion: str) -> dict[str, Any] | None:
    parts = assertion.split(".")
    if len(parts) != 3:
        return None
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return claims if isinstance(header, dict) and isinstance(claims, dict) else None


def routes(ids: Ids) -> list[web.RouteDef]:
    async def token(request: web.Request) -> web.Response:
        if request.content_type == "application/json":
            try:
                form: dict[str, Any] = await request.json()
            except ValueError:
                return _oauth_error("invalid_request", "Malformed JSON body.")
        else:
            form = dict(await request.post())
        grant = str(form.get("grant_type", ""))
        if grant == JWT_BEARER:
            claims = _jwt_claims(str(form.get("assertion", "")))
            if claims is None:
                return _oauth_error("invalid_grant", "Invalid JWT Signature.")
            if "iss" not in claims:
                return _oauth_error("invalid_grant", "Invalid JWT: iss claim missing.")
        elif grant == "refresh_token":
            if not form.get("refresh_token"):
                return _oauth_error("invalid_request", "Missing required parameter: refresh_token")
        else:
            return _oauth_error("unsupported_grant_type", f"Invalid grant_type: {grant}")
        token = "ya29." + ids.alnum(120, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        answer: dict[str, Any] = {"access_token": token,
                                  "expires_in": 3599, "token_type": "Bearer"}
        if grant == "refresh_token" and form.get("scope"):
            answer["scope"] = form["scope"]
        return json_response(answer)

    return [web.post("/token", token), web.post("/oauth2/v4/token", token)]
