"""Resource names of the Logging API, checked as the API checks them (a malformed one is INVALID_ARGUMENT)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from .errors import invalid

# The parents the API accepts for logs, sinks and buckets; only projects hold state here, but the others parse.
_PARENT = r"(?:projects|organizations|folders|billingAccounts)/[^/]+"
_LOCATION_PARENT = re.compile(rf"({_PARENT})/locations/([^/]+)")
_BUCKET = re.compile(rf"({_PARENT})/locations/([^/]+)/buckets/([^/]+)")
_VIEW = re.compile(rf"({_PARENT})/locations/([^/]+)/buckets/([^/]+)/views/([^/]+)")
_SINK = re.compile(rf"({_PARENT})/sinks/([^/]+)")
_LOG = re.compile(rf"({_PARENT})/logs/(.+)")
_PARENT_ONLY = re.compile(_PARENT)
# Google's rules: a bucket id has letters, digits, `_`, `-` and `.`, at most 100 characters, and a user's cannot
# start with `_` (reserved for _Default and _Required). A log id: letters, digits, `/ _ - .`, under 512.
BUCKET_ID = re.compile(r"[A-Za-z0-9_.\-]{1,100}")
SINK_ID = re.compile(r"[A-Za-z0-9_.\-]{1,100}")
LOG_ID = re.compile(r"[A-Za-z0-9/_.\-]{1,511}")
LOCATION = re.compile(r"[a-z0-9\-]+|-")


@dataclass(frozen=True)
class BucketName:
    parent: str
    location: str
    bucket_id: str

    def __str__(self) -> str:
        return f"{self.parent}/locations/{self.location}/buckets/{self.bucket_id}"


def parent(name: str, what: str = "parent") -> str:
    if not _PARENT_ONLY.fullmatch(name or ""):
        raise invalid(f"Invalid {what}: \"{name}\"")
    return name


def location_parent(name: str) -> tuple[str, str]:
    m = _LOCATION_PARENT.fullmatch(name or "")
    if not m or not LOCATION.fullmatch(m.group(2)):
        raise invalid(f"Invalid parent: \"{name}\". Expected format: projects/[PROJECT_ID]/locations/[LOCATION_ID]")
    return m.group(1), m.group(2)


def bucket(name: str) -> BucketName:
    m = _BUCKET.fullmatch(name or "")
    if not m or not LOCATION.fullmatch(m.group(2)) or m.group(2) == "-":
        raise invalid(f"Invalid bucket name: \"{name}\". Expected format: "
                      "projects/[PROJECT_ID]/locations/[LOCATION_ID]/buckets/[BUCKET_ID]")
    return BucketName(*m.groups())


def view(name: str) -> tuple[BucketName, str] | None:
    m = _VIEW.fullmatch(name or "")
    return (BucketName(m.group(1), m.group(2), m.group(3)), m.group(4)) if m else None


def sink(name: str) -> tuple[str, str]:
    m = _SINK.fullmatch(name or "")
    if not m:
        raise invalid(f"Invalid sink name: \"{name}\". Expected format: projects/[PROJECT_ID]/sinks/[SINK_ID]")
    return m.group(1), m.group(2)


def log(name: str) -> tuple[str, str]:
    """(parent, the canonical full name with the log id URL-encoded)."""
    m = _LOG.fullmatch(name or "")
    if not m:
        raise invalid(f"Invalid log name: \"{name}\". Expected format: projects/[PROJECT_ID]/logs/[LOG_ID]")
    log_id = unquote(m.group(2))
    if not LOG_ID.fullmatch(log_id):
        raise invalid(f"Log name \"{name}\" contains illegal characters; a log id may contain only letters, digits, "
                      "forward slashes, underscores, hyphens and periods, and must be shorter than 512 characters")
    return m.group(1), f"{m.group(1)}/logs/{quote(log_id, safe='')}"
