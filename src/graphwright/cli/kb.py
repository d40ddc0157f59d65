"""`graphwright kb ...`: publish, read, query and export the knowledge base from a shell.

The person at the terminal acts directly: `kb publish` files a request and approves it as them.
The embedded store is opened by one process at a time: while `graphwright serve` holds it, these
commands go through that server's API (with GRAPHWRIGHT_TOKEN, or a short-lived token they mint
in the same home), and print the same either way.
"""

from __future__ import annotations

import getpass
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import orjson
import typer

from graphwright.cli.common import (
    PlainCommand,
    PlainGroup,
    bad_input_exits,
    console,
    fail,
    print_rows,
)
from graphwright.core.words import counted
from graphwright.settings import get_settings

if TYPE_CHECKING:  # the knowledge room is loaded by the kb command that runs, not by the CLI
    from graphwright.knowledge.access import KnowledgeAccess
    from graphwright.knowledge.schemas import PublicationRequestView, QueryAnswer

app = typer.Typer(
    help="Publish, read and query knowledge assets (DKG-compatible).",
    no_args_is_help=True,
    cls=PlainGroup,
)
T = TypeVar("T")


def _run(label: str, work: Callable[[KnowledgeAccess], Awaitable[T]]) -> T:
    from graphwright.knowledge.access import open_access

    async def main() -> T:
        async with open_access(get_settings(), actor=_actor()) as access:
            return await work(access)

    with bad_input_exits(label):
        return anyio.run(main)


def _actor() -> str:
    return f"cli:{getpass.getuser()}"


def _read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except OSError as exc:
        raise fail(f"{path}: cannot read it ({exc.strerror})") from None
    except orjson.JSONDecodeError as exc:
        raise fail(f"{path}: not JSON ({exc})") from None


@app.command("publish", cls=PlainCommand)
def publish(
    file: Annotated[
        Path, typer.Argument(help="A JSON-LD file: an object, a list, or public/private.")
    ],
    title: Annotated[str | None, typer.Option(help="A title for the request.")] = None,
    revision_of: Annotated[
        str | None, typer.Option("--revision-of", help="The UAL this corrects.")
    ] = None,
) -> None:
    """Publish a JSON-LD file as one knowledge collection; prints its UAL."""
    content = _read_json(file)
    published = _run(
        str(file), lambda kb: kb.publish(content, title=title, revision_of=revision_of)
    )
    console.print(f"Published '{published.title}' as", highlight=False)
    print(published.ual)


@app.command("get", cls=PlainCommand)
def get(
    ual: Annotated[str, typer.Argument(help="A collection or asset UAL.")],
    format: Annotated[Literal["jsonld", "nquads"], typer.Option(help="Output syntax.")] = "jsonld",
) -> None:
    """Print a collection or asset as JSON-LD or N-Quads."""
    if format == "nquads":
        print("\n".join(_run(ual, lambda kb: kb.nquads(ual))))
        return
    document = _run(ual, lambda kb: kb.jsonld(ual))
    print(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())


@app.command("metadata", cls=PlainCommand)
def metadata(ual: Annotated[str, typer.Argument(help="A collection or asset UAL.")]) -> None:
    """Print who published an asset, when, in which transaction, and its later states."""
    found = _run(ual, lambda kb: kb.metadata(ual))
    print(
        orjson.dumps(
            found.model_dump(mode="json", by_alias=True), option=orjson.OPT_INDENT_2
        ).decode()
    )


@app.command("query", cls=PlainCommand)
def query(
    sparql: Annotated[str, typer.Argument(help="A SPARQL query, or a file that holds one.")],
    limit: Annotated[int | None, typer.Option(min=1, help="Rows at most.")] = None,
    json: Annotated[
        bool, typer.Option("--json", help="SPARQL JSON results instead of a table.")
    ] = False,
) -> None:
    """Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE)."""
    path = Path(sparql)
    text = path.read_text() if len(sparql) < 4096 and path.is_file() else sparql
    answer = _run("query", lambda kb: kb.query(text, limit=limit))
    _print_answer(answer, as_json=json)


def _print_answer(answer: QueryAnswer, *, as_json: bool) -> None:
    if answer.form == "graph":
        print(answer.triples or "")
    elif as_json or answer.form == "ask":
        print(orjson.dumps(answer.sparql_json(), option=orjson.OPT_INDENT_2).decode())
    else:
        print_rows(
            answer.variables,
            [[row[name]["value"] if name in row else "" for name in answer.variables]
             for row in answer.rows],
        )  # fmt: skip
    if answer.truncated:
        console.print(f"(cut at {answer.row_limit} rows)", style="yellow")


@app.command("requests", cls=PlainCommand)
def requests(
    status: Annotated[
        str | None, typer.Option(help="pending, published, rejected, failed or removed.")
    ] = "pending",
    json: Annotated[
        bool, typer.Option("--json", help="The requests as JSON, with their details.")
    ] = False,
) -> None:
    """List publication requests (pending ones by default): everything that waits for a
    person, knowledge-miner candidates included."""
    found, total = _run("requests", lambda kb: kb.requests(status=status or None))
    if json:
        wire = [request.model_dump(mode="json", by_alias=True) for request in found]
        print(orjson.dumps(wire, option=orjson.OPT_INDENT_2).decode())
        return
    print_rows(
        ["id", "status", "title", "requested by", "created", "UAL"],
        [
            [request.id, request.status, request.title, request.requested_by,
             request.created_at.strftime("%Y-%m-%d %H:%M"), request.ual or ""]
            for request in found
        ],
    )  # fmt: skip
    console.print(counted(total, "request"), highlight=False)


@app.command("approve", cls=PlainCommand)
def approve(
    request_id: Annotated[str, typer.Argument(help="The request's id (see `kb requests`).")],
    edited: Annotated[
        Path | None, typer.Option("--edited", help="Publish this JSON-LD file instead.")
    ] = None,
) -> None:
    """Approve a publication request: publish it, recording you as the approver."""
    content = _read_json(edited) if edited else None
    published = _run(request_id, lambda kb: kb.approve(request_id, content=content))
    console.print(f"Published '{published.title}' as", highlight=False)
    print(published.ual)
    _say_run_resumes(published)


def _say_run_resumes(request: PublicationRequestView) -> None:
    """A knowledge-miner candidate's decision is its run's: say where the run goes on."""
    run_id = (request.details or {}).get("runId")
    if run_id:
        print(
            f"Its knowledge-miner run {run_id} goes on with this decision: at once in a running "
            "server that shares this database, else when `graphwright serve` next starts."
        )


@app.command("reject", cls=PlainCommand)
def reject(
    request_id: Annotated[str, typer.Argument(help="The request's id.")],
    reason: Annotated[str, typer.Option(help="Why; recorded with the request.")],
) -> None:
    """Reject a publication request; nothing is published."""
    decided = _run(request_id, lambda kb: kb.reject(request_id, reason=reason))
    console.print(f"Rejected {request_id}.", highlight=False)
    _say_run_resumes(decided)


@app.command("export", cls=PlainCommand)
def export(
    output: Annotated[Path, typer.Option("-o", "--output", help="The file to write.")],
    format: Annotated[Literal["nquads", "trig"], typer.Option(help="N-Quads or TriG.")] = "nquads",
) -> None:
    """Write every quad of the knowledge base (public graphs and metadata) to a file."""
    data = _run("export", lambda kb: kb.export(format))
    output.write_bytes(data)
    # soft_wrap: the path whole on one line, however long, so that it can be copied
    console.print(f"Wrote {len(data):,} bytes to {output}", highlight=False, soft_wrap=True)


@app.command("remove-sample-data", cls=PlainCommand)
def remove_sample_data() -> None:
    """Remove the bundled sample data from the knowledge base; your own assets stay, and the
    sample data is not loaded again."""
    removal = _run("remove-sample-data", lambda kb: kb.remove_sample_data())
    if not removal.removed:
        print("No sample data to remove.")
        return
    print(f"Removed {counted(len(removal.removed), 'sample collection')}:")
    for collection in removal.removed:
        print(f"{collection.ual}  {collection.title}")
