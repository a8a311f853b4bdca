"""Request parameters the way Rails hands them to Canvas's controllers (the kit's Rails dialect): query strings and
form bodies with bracketed names (`course[name]=x`, `assignment[submission_types][]=a`,
`quiz_questions[][id]=1&quiz_questions[][answer]=2`), JSON bodies merged in as they are. Scripts send both (requests'
`data=`/`json=`, aiohttp, axios), so every handler reads one nested dict. A JSON body's keys are taken literally, as
Rails does: `{"recipients[]": [...]}` is not `recipients`."""
from __future__ import annotations

from typing import NoReturn

from decathlon.emulators.canvas.errors import ApiError
from decathlon.emulators.kit import params


def _refuse(what: str) -> NoReturn:
    kind = "valid JSON" if what == "json" else "valid form data"
    raise ApiError(400, {"errors": [{"message": f"The request body is not {kind}."}]})


def parse_body(content_type: str, raw: bytes) -> dict:
    """The body's parameters; ApiError 400 for a body Rails would refuse to parse."""
    return params.decode_body(content_type, raw, _refuse, "rails")


def number(value: float | int | None) -> float | int | None:
    """Numbers as Canvas's JSON writes them: 10 not 10.0, 7.5 as is."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
