"""Result text: PyYAML's safe dumper (two-space indent, keys in row order, ASCII only, 80 columns) and the JSON twin.

Only three value types get the reference's own treatment, and only for their exact type (PyYAML looks
representers up by exact type): `date` becomes its ISO text (quoted, so it stays a string), `Decimal`
becomes a float, and a float prints as `str(float)`, NaN as an empty null. Everything else is PyYAML's:
`datetime` prints plain as `2025-10-15 15:36:13`, `None` as `null`, booleans `true`/`false`, and a type
the safe dumper cannot represent (`datetime.time`) fails the whole call with PyYAML's error.

The JSON text is always computed too, even when it is not sent, so a value JSON cannot hold (bytes, a
time) fails the call the way it fails the reference's.
"""
from __future__ import annotations

import datetime
import decimal
import json
import math
from typing import Any

import yaml


def plain(value: Any) -> Any:
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


class _Dumper(yaml.SafeDumper):
    pass


def _represent(dumper: yaml.SafeDumper, value: Any) -> yaml.ScalarNode:
    converted = plain(value)
    if converted is None:
        return dumper.represent_scalar("tag:yaml.org,2002:null", "")
    if isinstance(converted, float):
        return dumper.represent_scalar("tag:yaml.org,2002:float", str(converted))
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(converted))


for _type in (datetime.date, decimal.Decimal, float):
    _Dumper.add_representer(_type, _represent)


def to_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, indent=2, sort_keys=False)


def to_json(data: Any) -> str:
    # A type `plain` leaves alone comes back unchanged, which json reports as a circular reference.
    return json.dumps(data, default=plain, indent=2)
