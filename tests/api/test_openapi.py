"""The OpenAPI document builds for every route the app serves, and gives each of them its
errors: a route added without its entry must fail here, not answer 500 at /openapi.json."""

from __future__ import annotations

from graphwright.app import create_app


def test_the_openapi_document_lists_every_api_route_with_its_errors() -> None:
    app = create_app()
    document = app.openapi()
    served = {
        (route.path, method.lower())  # type: ignore[attr-defined]
        for route in app.routes
        if getattr(route, "path", "").startswith("/api/")
        and getattr(route, "include_in_schema", False)
        for method in route.methods - {"HEAD"}  # type: ignore[attr-defined]
    }
    documented = {
        (path, method)
        for path, operations in document["paths"].items()
        for method in operations
        if path.startswith("/api/")
    }
    assert served - documented == set()
    for path, method in documented:
        responses = document["paths"][path][method]["responses"]
        assert "401" in responses, (path, method)
        assert any(status.startswith("2") for status in responses), (path, method)
