"""The API's protobuf message classes, taken from the proto-plus types google-cloud-logging ships (`Type.pb()`
is the raw protobuf class; the handlers work on those, which are faster than the proto-plus wrappers).

`google.cloud.logging_v2/__init__.py` imports the whole client (gapic transports, api_core operations,
google.cloud.client: ~0.3 s), and the types import their siblings through that package. The emulator needs only
the types (~0.08 s), so the package is registered bare (its path, not its __init__) before they are imported.
This process never uses the client, so nothing misses what the __init__ would have defined.
"""
from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any


def _bare_package(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not installed (google-cloud-logging, in the SaaS virtualenv)")
    module = types.ModuleType(name)
    module.__path__ = list(spec.submodule_search_locations)
    module.__spec__ = spec
    sys.modules[name] = module


_bare_package("google.cloud.logging_v2")

from google.cloud.logging_v2.types import log_entry as _log_entry  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: E402
from google.cloud.logging_v2.types import logging as _logging  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: E402
from google.cloud.logging_v2.types import logging_config as _config  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: E402
from google.protobuf import empty_pb2 as _empty  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: E402

Empty: Any = _empty.Empty
LogEntry: Any = _log_entry.LogEntry.pb()

LogBucket: Any = _config.LogBucket.pb()
LogSink: Any = _config.LogSink.pb()
ListBucketsRequest: Any = _config.ListBucketsRequest.pb()
ListBucketsResponse: Any = _config.ListBucketsResponse.pb()
GetBucketRequest: Any = _config.GetBucketRequest.pb()
CreateBucketRequest: Any = _config.CreateBucketRequest.pb()
UpdateBucketRequest: Any = _config.UpdateBucketRequest.pb()
DeleteBucketRequest: Any = _config.DeleteBucketRequest.pb()
UndeleteBucketRequest: Any = _config.UndeleteBucketRequest.pb()
ListSinksRequest: Any = _config.ListSinksRequest.pb()
ListSinksResponse: Any = _config.ListSinksResponse.pb()
GetSinkRequest: Any = _config.GetSinkRequest.pb()
CreateSinkRequest: Any = _config.CreateSinkRequest.pb()
UpdateSinkRequest: Any = _config.UpdateSinkRequest.pb()
DeleteSinkRequest: Any = _config.DeleteSinkRequest.pb()
ACTIVE: int = int(_config.LifecycleState.ACTIVE)
DELETE_REQUESTED: int = int(_config.LifecycleState.DELETE_REQUESTED)

WriteLogEntriesRequest: Any = _logging.WriteLogEntriesRequest.pb()
WriteLogEntriesResponse: Any = _logging.WriteLogEntriesResponse.pb()
ListLogEntriesRequest: Any = _logging.ListLogEntriesRequest.pb()
ListLogEntriesResponse: Any = _logging.ListLogEntriesResponse.pb()
ListLogsRequest: Any = _logging.ListLogsRequest.pb()
ListLogsResponse: Any = _logging.ListLogsResponse.pb()
DeleteLogRequest: Any = _logging.DeleteLogRequest.pb()
