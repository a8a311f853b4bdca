"""The gcp emulator answers each of Google's hosts only with that host's own API (decathlon.emulators.gcp.hosts), and
Cloud Resource Manager finds the episode's project as a later revision of the checkout asks it to."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from decathlon.emulators.gcp import credentials
from decathlon.emulators.gcp.hosts import BIGQUERY, OAUTH2, RESOURCE_MANAGER, STORAGE, host_of
from tests.saas_venv import REPO, saas_python
from tests.test_gcp_emulator import Emulator


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[Emulator]:
    emu = Emulator(tmp_path_factory.mktemp("gcp-hosts"))
    yield emu
    assert emu.stop() == 0


def _get(emu: Emulator, host: str | None, path: str) -> requests.Response:
    headers = {"Host": host} if host else {}
    return requests.get(emu.url + path, headers=headers, timeout=10)


def test_each_path_belongs_to_one_host():
    assert host_of("/bigquery/v2/projects/p/datasets") == BIGQUERY
    assert host_of("/upload/bigquery/v2/projects/p/jobs") == BIGQUERY
    assert host_of("/storage/v1/b") == STORAGE and host_of("/some-bucket/an/object") == STORAGE
    assert host_of("/token") == OAUTH2
    assert host_of("/v3/projects:search") == RESOURCE_MANAGER


def test_a_path_of_another_service_gets_that_hosts_404_page(emulator):
    for host, path in ((STORAGE, "/bigquery/v2/projects/p/datasets"), (BIGQUERY, "/storage/v1/b?project=p"),
                       (OAUTH2, "/bigquery/v2/projects/p/datasets"), (BIGQUERY, "/v3/projects:search"),
                       (RESOURCE_MANAGER, "/storage/v1/b")):
        got = _get(emulator, host, path)
        assert got.status_code == 404, (host, path, got.status_code)
        assert got.headers["Content-Type"].startswith("text/html"), (host, path)
        assert "Error 404 (Not Found)!!1" in got.text and path.split("?")[0] in got.text
    # Each host still answers its own API, and with a port in Host too.
    assert _get(emulator, BIGQUERY, "/bigquery/v2/projects/p/datasets").status_code == 200
    assert _get(emulator, STORAGE + ":443", "/storage/v1/b?project=p").status_code == 200


def test_a_client_pointed_at_the_emulators_address_is_routed_by_path(emulator):
    assert _get(emulator, None, "/bigquery/v2/projects/p/datasets").status_code == 200
    assert _get(emulator, None, "/storage/v1/b?project=p").status_code == 200


def test_the_404_page_escapes_the_path(emulator):
    got = _get(emulator, BIGQUERY, "/<script>x</script>")
    assert got.status_code == 404 and "<script>" not in got.text and "&lt;script&gt;" in got.text


def test_resource_manager_finds_the_episodes_one_project(emulator):
    got = _get(emulator, RESOURCE_MANAGER, "/v3/projects:search").json()
    assert [p["projectId"] for p in got["projects"]] == [credentials.PROJECT_ID]
    assert got["projects"][0]["name"].startswith("projects/") and got["projects"][0]["state"] == "ACTIVE"
    assert _get(emulator, RESOURCE_MANAGER, f"/v3/projects/{credentials.PROJECT_ID}").json()["projectId"] == \
        credentials.PROJECT_ID
    assert _get(emulator, RESOURCE_MANAGER, f"/v3/projects:search?query=id:{credentials.PROJECT_ID}").json()[
        "projects"][0]["projectId"] == credentials.PROJECT_ID
    assert _get(emulator, RESOURCE_MANAGER, "/v3/projects:search?query=id:someone-else").json() == {}
    other = _get(emulator, RESOURCE_MANAGER, "/v3/projects/someone-else")
    assert other.status_code == 403 and other.json()["error"]["status"] == "PERMISSION_DENIED"
    assert [p["projectId"] for p in _get(emulator, RESOURCE_MANAGER, "/v1/projects").json()["projects"]] == \
        [credentials.PROJECT_ID]


def test_the_oauth_token_file_signs_in_as_google_auth_reads_it(tmp_path: Path):
    """The later checkout's form: an OAuth token response saved to a file, read field by field into google-auth's
    user credentials."""
    import json
    written = credentials.write(tmp_path, "unused-key")
    token = json.loads(written[credentials.CLOUD_TOKEN_FILE])
    assert {"access_token", "refresh_token", "client_id", "client_secret", "scope"} <= set(token)
    assert "https://www.googleapis.com/auth/cloud-platform" in token["scope"].split()
    assert token["token_uri"] == "https://oauth2.googleapis.com/token"


def test_a_method_google_has_and_the_emulator_lacks_is_501_not_a_missing_path(emulator):
    """Routes are checked against Google's discovery documents (google-api-python-client's, in the saas venv)."""
    got = requests.get(emulator.url + "/bigquery/v2/projects/p/datasets/d/routines", timeout=10)
    assert got.status_code == 501, got.text
    error = got.json()["error"]
    assert error["status"] == "UNIMPLEMENTED" and "bigquery.routines.list" in error["message"]
    nowhere = requests.get(emulator.url + "/bigquery/v2/projects/p/nothing-here", timeout=10)
    assert nowhere.status_code == 404 and nowhere.json()["error"]["status"] == "NOT_FOUND"


def test_the_coverage_table_counts_what_the_router_answers():
    code = """
from decathlon.emulators.kit import discovery
routed = {("GET", "/bigquery/v2/projects/{}/datasets"), ("POST", "/bigquery/v2/projects/{}/datasets")}
got = discovery.coverage("bigquery", "v2", routed)
assert got.implemented == ("bigquery.datasets.insert", "bigquery.datasets.list"), got.implemented
assert "bigquery.tables.get" in got.missing and got.total == len(got.implemented) + len(got.missing)
from decathlon.emulators.gcp.coverage import table
print(table())
"""
    out = subprocess.run([str(saas_python()), "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr[-2000:]
    rows = {line.split("|")[1].strip(): line.split("|") for line in out.stdout.splitlines()[2:]}
    assert set(rows) == {"bigquery v2", "storage v1"}
    for cells in rows.values():
        assert 0 < int(cells[3]) <= int(cells[2])
    assert "routines.list" in rows["bigquery v2"][4] and "tables.get," not in rows["bigquery v2"][4]
