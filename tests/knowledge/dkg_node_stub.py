"""A DKG v8 node's HTTP API (v1) on a real uvicorn server, in the shapes dkg-engine's controllers
answer: operations that pass through pending statuses before COMPLETED or FAILED, direct-query
rows as Comunica's strings, and the `<metadata:graph>` a node writes when a collection is minted.

SPARQL runs for real, on a pyoxigraph store laid out as a node lays out its own. Publish
signatures are real ECDSA signatures by the stub's operational key, so the client's check of
them runs too. The chain is not here: `mint` is what a node does when it sees the collection's
on-chain event.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyoxigraph as ox
import uvicorn
from dkg.utils.knowledge_collection_tools import calculate_merkle_root
from eth_account import Account
from eth_account.messages import encode_defunct
from hexbytes import HexBytes
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.conftest import free_port

DKG = "https://ontology.origintrail.io/dkg/1.0#"
XSD = "http://www.w3.org/2001/XMLSchema#"
METADATA = ox.NamedNode("metadata:graph")
CURRENT = ox.NamedNode("current:graph")
STORAGE = "0x8f8b7e2a8a2b7c1d9e0f11223344556677889900"  # KnowledgeCollectionStorage
CHAIN = "hardhat1:31337"
# Hardhat's well-known development account #1: the stub node's operational key.
NODE_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
NODE_IDENTITY = 1
_ROOT = re.compile(r"0x[0-9a-f]{64}")


@dataclass
class Operation:
    """One node operation: pending answers to give, then the final one."""

    pending: list[dict[str, Any]]
    final: dict[str, Any]
    polls: int = 0
    dataset: dict[str, list[str]] = field(default_factory=dict)

    def poll(self) -> dict[str, Any]:
        self.polls += 1
        return self.pending.pop(0) if self.pending else self.final


class DkgNodeStub:
    """State and app of one stub node. `pending_polls` is how many polls an operation stays
    pending; `query_delay` slows every direct-query (seconds)."""

    def __init__(self, *, token: str | None = None, pending_polls: int = 2) -> None:
        self.token = token
        self.pending_polls = pending_polls
        self.query_delay = 0.0
        self.publish_failure: str | None = None
        self.store = ox.Store()
        self.operations: dict[str, Operation] = {}
        self.requests: list[tuple[str, str, Any]] = []  # (method, path, JSON body or query)
        self._last_kc = 0
        self.app = Starlette(
            routes=[
                Route("/v1/info", self.info),
                Route("/v1/get", self.get, methods=["POST"]),
                Route("/v1/publish", self.publish, methods=["POST"]),
                Route("/v1/direct-query", self.direct_query, methods=["POST"]),
                Route("/v1/finality", self.finality),
                Route("/v1/{operation}/{operation_id}", self.operation_result),
            ]
        )

    # ----- what the node holds

    def add_collection(
        self,
        assets: list[list[str]],
        *,
        publisher: str = "0x70997970c51812dc3a010c7d01b50e8f3c79c8",
        tx: str | None = None,
        time: datetime | None = None,
    ) -> str:
        """Store a collection as a node does once minted: one named graph per asset (its
        N-Triples lines) and the node's metadata. Returns the collection's UAL."""
        self._last_kc += 1
        kc = f"did:dkg:{CHAIN}/{STORAGE}/{self._last_kc}"
        time = time or datetime.now(UTC).replace(microsecond=0)
        tx = tx or f"0x{self._last_kc:064x}"
        quads = []
        for number, lines in enumerate(assets, start=1):
            ka = ox.NamedNode(f"{kc}/{number}")
            graph = ox.NamedNode(f"{ka.value}/public")
            for triple in ox.parse("\n".join(lines).encode(), ox.RdfFormat.N_TRIPLES):
                quads.append(ox.Quad(triple.subject, triple.predicate, triple.object, graph))
            quads += [
                ox.Quad(CURRENT, _dkg("hasNamedGraph"), graph, CURRENT),
                _meta(ox.NamedNode(kc), "hasKnowledgeAsset", ka),
                _meta(ox.NamedNode(kc), "hasNamedGraph", graph),
                ox.Quad(
                    ka,
                    ox.NamedNode("http://schema.org/states"),
                    ox.Literal(f"{ka.value}:0"),
                    METADATA,
                ),
            ]
        subject = ox.NamedNode(kc)
        stamp = ox.Literal(time.isoformat().replace("+00:00", "Z"), datatype=_xsd("dateTime"))
        quads += [
            _meta(subject, "publishedBy", ox.NamedNode(f"did:dkg:publisherKey/{publisher}")),
            _meta(subject, "publishedAtBlock", ox.Literal(str(100 + self._last_kc))),
            _meta(subject, "publishTx", ox.Literal(tx)),
            _meta(subject, "publishTime", stamp),
            _meta(subject, "blockTime", stamp),
        ]
        self.store.extend(quads)
        return kc

    def mint(self, operation_id: str, *, publisher: str, tx: str) -> int:
        """What the node does on the chain's KnowledgeCollectionCreated event: store the
        published dataset, one asset per subject in the order the client sent them."""
        dataset = self.operations[operation_id].dataset
        by_subject: dict[str, list[str]] = {}
        for triple in ox.parse("\n".join(dataset["public"]).encode(), ox.RdfFormat.N_TRIPLES):
            by_subject.setdefault(str(triple.subject), []).append(
                f"{triple.subject} {triple.predicate} {triple.object} ."
            )
        kc = self.add_collection(list(by_subject.values()), publisher=publisher, tx=tx)
        return int(kc.rsplit("/", 1)[1])

    def requests_to(self, path: str) -> list[Any]:
        return [body for _, p, body in self.requests if p == path]

    # ----- the v1 API

    def _refused(self, request: Request) -> Response | None:
        if self.token and request.headers.get("authorization") != f"Bearer {self.token}":
            return PlainTextResponse("Unauthenticated.", status_code=401)
        return None

    async def _record(self, request: Request) -> Any:
        body = await request.json() if request.method == "POST" else dict(request.query_params)
        self.requests.append((request.method, request.url.path, body))
        return body

    def _start(
        self, pending: list[dict[str, Any]], final: dict[str, Any], **dataset: list[str]
    ) -> Response:
        """Start an operation that stays pending for `pending_polls` polls: 202 and its id."""
        operation_id = str(uuid.uuid4())
        steps = [pending[n % len(pending)] for n in range(self.pending_polls)]
        self.operations[operation_id] = Operation(steps, final, dataset=dataset)
        return JSONResponse({"operationId": operation_id}, status_code=202)

    async def info(self, request: Request) -> Response:
        return self._refused(request) or JSONResponse({"version": "8.2.6"})

    async def get(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        body = await self._record(request)
        ual = body["id"]
        lines = self._content(ual)
        if lines is None:
            final = {
                "status": "FAILED",
                "data": {
                    "errorMessage": f"Get for operation id: {uuid.uuid4()}, UAL: {ual}: there "
                    "is no asset with this UAL.",
                    "errorType": "GetValidateAssetError",
                },
            }
        else:
            final = {"status": "COMPLETED", "data": {"assertion": {"public": lines, "private": []}}}
        pending = [{"status": s} for s in ("GET_START", "GET_INIT_START", "GET_LOCAL_START")]
        return self._start(pending, final)

    def _content(self, ual: str) -> list[str] | None:
        kc = ual if ual.count("/") == 2 else ual.rsplit("/", 1)[0]
        graphs = [
            str(quad.object)
            for quad in self.store.quads_for_pattern(
                ox.NamedNode(kc), _dkg("hasNamedGraph"), None, METADATA
            )
        ]
        wanted = [g for g in graphs if ual == kc or g == f"<{ual}/public>"]
        if not wanted:
            return None
        answer = self.store.query(
            f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ VALUES ?g {{ {' '.join(wanted)} }} "
            "GRAPH ?g { ?s ?p ?o } }"
        )
        return [f"{t.subject} {t.predicate} {t.object} ." for t in answer]

    async def publish(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        body = await self._record(request)
        root = body.get("datasetRoot", "")
        if not _ROOT.fullmatch(root) or calculate_merkle_root(body["dataset"]["public"]) != root:
            return JSONResponse({"code": 400, "message": "Invalid dataset root"}, 400)
        pending = [{"status": "PUBLISH_REPLICATE_START", "data": {"minAcksReached": False}}]
        if self.publish_failure:
            final = {
                "status": "FAILED",
                "data": {"errorMessage": self.publish_failure, "errorType": "PublishError"},
            }
        else:
            signature = _sign(root)
            final = {
                "status": "COMPLETED",
                "data": {
                    "minAcksReached": True,
                    "publisherNodeSignature": signature,
                    "signatures": [signature],
                },
            }
        return self._start(pending, final, **body["dataset"])

    async def operation_result(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        operation_id = request.path_params["operation_id"]
        try:
            uuid.UUID(operation_id, version=4)
        except ValueError:
            message = f"Operation id: {operation_id} is in wrong format"
            return JSONResponse({"code": 400, "message": message}, 400)
        operation = self.operations.get(operation_id)
        if operation is None:
            message = f"Handler with id: {operation_id} does not exist."
            return JSONResponse({"code": 400, "message": message}, 400)
        return JSONResponse(operation.poll())

    async def finality(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        body = await self._record(request)
        minted = self._content(body.get("ual", "")) is not None
        return JSONResponse({"finality": 3 if minted else 0})

    async def direct_query(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        body = await self._record(request)
        await asyncio.sleep(self.query_delay)
        kind = body.get("type")
        if kind not in ("SELECT", "CONSTRUCT"):
            return PlainTextResponse(f"Unknown query type {kind}", status_code=400)
        try:
            answer = self.store.query(body["query"], use_default_graph_as_union=False)
        except (SyntaxError, OSError) as exc:
            return PlainTextResponse(str(exc), status_code=500)
        if kind == "CONSTRUCT":
            lines = [f"{t.subject} {t.predicate} {t.object} ." for t in answer]
            return JSONResponse({"data": "".join(line + "\n" for line in lines)})
        rows = [
            {
                variable.value: _comunica(solution[variable])
                for variable in answer.variables
                if solution[variable] is not None
            }
            for solution in answer
        ]
        return JSONResponse({"data": rows})


def _comunica(term: Any) -> str:
    """A term as Comunica's simple JSON writes it (rdf-string's termToString)."""
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    text = f'"{term.value}"'
    if term.language:
        return f"{text}@{term.language}"
    if term.datatype.value != XSD + "string":
        return f"{text}^^{term.datatype.value}"
    return text


def _dkg(name: str) -> ox.NamedNode:
    return ox.NamedNode(DKG + name)


def _xsd(name: str) -> ox.NamedNode:
    return ox.NamedNode(XSD + name)


def _meta(subject: ox.NamedNode, predicate: str, obj: Any) -> ox.Quad:
    return ox.Quad(subject, _dkg(predicate), obj, METADATA)


def _sign(dataset_root: str) -> dict[str, Any]:
    """The node's signature of a dataset root, as the publish result carries it."""
    signed = Account.sign_message(encode_defunct(HexBytes(dataset_root)), NODE_KEY)
    vs = signed.s | ((signed.v - 27) << 255)
    return {
        "identityId": NODE_IDENTITY,
        "v": signed.v,
        "r": f"0x{signed.r:064x}",
        "s": f"0x{signed.s:064x}",
        "vs": f"0x{vs:064x}",
    }


@contextlib.asynccontextmanager
async def serve(stub: DkgNodeStub) -> AsyncIterator[str]:
    """Run the stub on a free local port for the duration; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(stub.app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
