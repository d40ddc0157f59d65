"""The OpenAPI document states the rules the server enforces: the bearer scheme, each route's
error responses in the envelope, the media types a route answers with, and one-of bodies."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
ERROR_ENVELOPE = {
    "type": "object",
    "required": ["success", "error"],
    "properties": {
        "success": {"type": "boolean", "const": False},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        },
    },
}
WHY = {
    "400": "A SPARQL query the parser refuses (malformed, an update, SERVICE), or an empty or "
    "malformed If-Match header",
    "401": "No token, or an unknown, revoked or expired one",
    "403": "A token scoped to another conversation",
    "404": "The conversation's graph, a node, an edge or a version does not exist",
    "406": "None of the Accept header's media types can be given",
    "409": "The graph is at another version (If-Match, expectedVersion) or an id is taken",
    "413": "The body is larger than GRAPHWRIGHT_MAX_BODY_BYTES",
    "415": "The body's media type is not one this route reads",
    "422": "The input breaks a rule; the message names the field (and the limit)",
    "429": "Too many knowledge-miner runs for this token; the message says when to retry",
    "503": "The knowledge base (or the miner's store) cannot be reached or opened",
}
KNOWLEDGE = "/api/knowledge"
# The knowledge base's routes: each one's own errors, beyond 401 and 422.
KNOWLEDGE_STATUSES: dict[tuple[str, str], list[str]] = {
    (f"{KNOWLEDGE}/assets", "get"): ["503"],
    (f"{KNOWLEDGE}/assets/{{ual}}", "get"): ["403", "404", "503"],
    (f"{KNOWLEDGE}/metadata/{{ual}}", "get"): ["404", "503"],
    (f"{KNOWLEDGE}/sparql", "get"): ["400", "406", "503"],
    (f"{KNOWLEDGE}/sparql", "post"): ["400", "406", "413", "415", "503"],
    (f"{KNOWLEDGE}/query", "post"): ["400", "413", "503"],
    (f"{KNOWLEDGE}/export", "get"): ["400", "406", "503"],
    (f"{KNOWLEDGE}/sample-data", "delete"): ["403", "503"],
    (f"{KNOWLEDGE}/requests", "post"): ["413"],
    (f"{KNOWLEDGE}/requests", "get"): [],
    (f"{KNOWLEDGE}/requests/{{request_id}}", "get"): ["403", "404"],
    (f"{KNOWLEDGE}/requests/{{request_id}}/approve", "post"): ["403", "404", "409", "413", "503"],
    (f"{KNOWLEDGE}/requests/{{request_id}}/reject", "post"): ["403", "404", "409", "413"],
    (f"{KNOWLEDGE}/requests/from-graph/{{conversation_id}}", "post"): ["403", "404", "413"],
}
MINER = "/api/miner"
# The miner's routes: each one's own errors, beyond 401 and 422 (409 also when no model is set).
MINER_STATUSES: dict[tuple[str, str], list[str]] = {
    (f"{MINER}/runs", "post"): ["409", "413", "429", "503"],
    (f"{MINER}/runs", "get"): [],
    (f"{MINER}/runs/{{run_id}}", "get"): ["404"],
    (f"{MINER}/runs/{{run_id}}/events", "get"): ["404"],
    (f"{MINER}/runs/{{run_id}}/decisions", "post"): ["403", "404", "409", "413", "503"],
    (f"{MINER}/memory", "get"): ["503"],
    (f"{MINER}/memory/{{tag}}/{{note}}", "get"): ["404", "503"],
    (f"{MINER}/memory/{{tag}}/{{note}}", "put"): ["403", "413", "503"],
}
WRITE_METHODS = frozenset({"post", "put", "patch", "delete"})
# Routes whose success is not JSON, or not only JSON.
MEDIA_TYPES = {
    ("/api/graph/{conversation_id}/export", "get"): [
        "application/vnd.knowledge-graph+json",
        "application/json",
        "application/ld+json",
        "application/x-ndjson",
        "application/x-tar",
        "application/xml",
        "application/n-triples",
    ],
    ("/api/chat", "post"): ["text/event-stream", "application/json"],
    (f"{KNOWLEDGE}/assets/{{ual}}", "get"): ["application/json", "application/n-quads"],
    **{
        (f"{KNOWLEDGE}/sparql", method): [
            "application/sparql-results+json",
            "application/sparql-results+xml",
            "text/csv",
            "text/tab-separated-values",
            "application/n-triples",
            "text/turtle",
            "application/ld+json",
            "application/rdf+xml",
        ]
        for method in ("get", "post")
    },
    (f"{KNOWLEDGE}/export", "get"): ["application/n-quads", "application/trig"],
    ("/api/graph/{conversation_id}/events", "get"): ["text/event-stream"],
    (f"{MINER}/runs/{{run_id}}/events", "get"): ["text/event-stream"],
}


def install_openapi(app: FastAPI) -> None:
    """Build the document once, on first request, with the additions above."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                routes=app.routes,
            )
            _add_errors(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = build  # type: ignore[method-assign]


def _statuses(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    statuses = ["401", "422"]
    if path.startswith(KNOWLEDGE):
        return sorted(statuses + KNOWLEDGE_STATUSES[(path, method)])
    if path.startswith(MINER):
        return sorted(statuses + MINER_STATUSES[(path, method)])
    if "{conversation_id}" in path or path == "/api/chat":
        statuses += ["403", "404"]
    if method in WRITE_METHODS and path != "/api/graphs":
        statuses.append("409")
    if "requestBody" in operation:
        statuses.append("413")
    if any(p.get("name", "").lower() == "if-match" for p in operation.get("parameters", [])):
        statuses.append("400")
    return sorted(statuses)


def _add_errors(document: dict[str, Any]) -> None:
    components = document.setdefault("components", {})
    components.setdefault("schemas", {})["ErrorEnvelope"] = ERROR_ENVELOPE
    components.setdefault("securitySchemes", {})["bearer"] = {"type": "http", "scheme": "bearer"}
    for path, operations in document.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for method, operation in operations.items():
            operation["security"] = [{"bearer": []}]
            responses = operation.setdefault("responses", {})
            for status in _statuses(path, method, operation):
                responses[status] = {
                    "description": WHY[status],
                    "content": {"application/json": {"schema": ERROR_REF}},
                }
            media_types = MEDIA_TYPES.get((path, method))
            if media_types:
                success = next(s for s in responses if s.startswith("2"))
                responses[success]["content"] = {media: {} for media in media_types}
