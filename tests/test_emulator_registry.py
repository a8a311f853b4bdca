"""The vendors' descriptors and the registry: every emulator declares itself once, and nothing outside its package
spells a vendor fact it owns."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from decathlon.emulators import registry
from decathlon.emulators.vendor import Host, Vendor

REPO = Path(registry.__file__).resolve().parents[2]


def test_every_emulator_package_with_a_descriptor_is_found_and_valid():
    names = [v.name for v in registry.vendors()]
    assert names == sorted(names)
    assert {"gcp", "gcplogging", "snowflake", "mail", "canvas", "woocommerce"} <= set(names)
    for v in registry.vendors():
        assert (REPO / "decathlon" / "emulators" / v.name / "__main__.py").is_file(), v.name
        assert v.reach in ("front", "service")
        assert (v.hosts and not v.ports) if v.reach == "front" else (v.ports and not v.hosts), v.name
        assert v.title and v.surface and v.systems, v.name
        if v.credentials is not None:
            assert set(v.credentials.files) == set(v.credentials.write(Path("/nonexistent"), "KEY")), v.name


def test_routing_prefers_an_exact_host_and_refuses_what_no_vendor_claims():
    vendor, host = registry.route_for("xy12345.us-east-1.snowflakecomputing.com")
    assert vendor.name == "snowflake" and host.pattern == "*.snowflakecomputing.com"
    assert registry.route_for("logging.googleapis.com")[0].name == "gcplogging"
    assert registry.route_for("snowflakecomputing.com") is None
    assert registry.route_for("evil-googleapis.com") is None
    assert registry.emulators_of_server("google-cloud") == ("gcp", "gcplogging")
    assert registry.service_of_server("emails") == "mail" and registry.service_of_server("filesystem") is None


def test_two_vendors_claiming_one_host_are_refused():
    a = Vendor("a", "A", "front", "REST", hosts=(Host("x.example.com"),))
    b = Vendor("b", "B", "front", "REST", hosts=(Host("x.example.com"),))
    with pytest.raises(registry.RegistryError, match="x.example.com is declared by both a and b"):
        registry._check([a, b])


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module but its docstrings (prose may name a vendor; code must not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def _domain(host: str) -> str:
    return ".".join(host.removeprefix("*.").split(".")[-2:])


def test_no_vendor_host_is_spelled_outside_its_emulators_package():
    """Outside the packages of the vendor's own family (one domain: Logging's sinks name BigQuery and Storage
    destinations, in Logging's own vocabulary), no code names a vendor's host."""
    family: dict[str, set[str]] = {}
    for v in registry.vendors():
        for h in v.hosts:
            family.setdefault(_domain(h.pattern), set()).add(v.name)
    owned = {h.pattern.removeprefix("*."): family[_domain(h.pattern)] for v in registry.vendors() for h in v.hosts}
    found = []
    for path in sorted((REPO / "decathlon").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        for line, text in _string_literals(path):
            for host, owners in owned.items():
                if host in text and not any(rel.startswith(f"decathlon/emulators/{o}/") for o in owners):
                    found.append(f"{rel}:{line}: {host}")
    assert not found, "vendor hosts outside their emulator's package (read them from decathlon.emulators.registry):\n" \
        + "\n".join(found)


def test_every_emulators_errors_share_one_root():
    from decathlon.emulators.gcp.bigquery.errors import QueryError
    from decathlon.emulators.gcplogging.errors import ApiError as GrpcError
    from decathlon.emulators.kit.errors import ApiError
    from decathlon.emulators.kit.failure import ServiceError
    from decathlon.emulators.snowflake.wire import SnowflakeError
    from decathlon.emulators.woocommerce.errors import RestError
    for base in (ApiError, GrpcError, SnowflakeError, RestError, QueryError):
        assert issubclass(base, ServiceError), base
    assert isinstance(SnowflakeError(2003, "02000", "x"), ServiceError)
