"""The read-only SPARQL console: a query, its answer as a table (or a boolean, or triples), and
a refused query's reason in plain words. Queries go through KnowledgeService.query, which allows
SELECT, CONSTRUCT, ASK and DESCRIBE only, within the configured row and time limits."""

from __future__ import annotations

import html

from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.errors import GraphwrightError
from graphwright.knowledge import vocab
from graphwright.knowledge.schemas import QueryAnswer, Term
from graphwright.web.common import SIGN_IN, guarded, io, signed_in
from graphwright.web.context import WebContext
from graphwright.web.knowledge_pages import knowledge_frame

EXAMPLE = f"""PREFIX schema: <http://schema.org/>
SELECT ?asset ?name WHERE {{
  GRAPH <{vocab.CURRENT_GRAPH}> {{ ?g <{vocab.HAS_NAMED_GRAPH}> ?asset }}
  GRAPH ?asset {{ ?s schema:name ?name }}
}} LIMIT 25"""


def register(context: WebContext) -> None:
    @ui.page("/kb/sparql", title="SPARQL · graphwright")
    def sparql_page() -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        with knowledge_frame(context, principal, "SPARQL console", "/kb/sparql"):
            SparqlConsole(context)
        return None


class SparqlConsole:
    def __init__(self, context: WebContext) -> None:
        self.context = context
        ui.label(
            "Read-only: SELECT, CONSTRUCT, ASK and DESCRIBE. Ctrl+Enter runs the query."
        ).classes("text-sm")
        self.query = (
            ui.textarea("SPARQL query", value=EXAMPLE)
            .props('outlined autogrow input-class="font-mono" aria-label="SPARQL query"')
            .classes("w-full")
            .mark("sparql-query")
            .props('data-testid="sparql-query"')
        )
        self.query.on("keydown.ctrl.enter", self.run)
        ui.button("Run query", icon="play_arrow", on_click=self.run).mark("sparql-run").props(
            'data-testid="sparql-run"'
        )
        self.answer = (
            ui.column().classes("w-full").mark("sparql-answer").props('data-testid="sparql-answer"')
        )

    @guarded
    async def run(self) -> None:
        self.answer.clear()
        try:
            found = await self.context.knowledge.query(self.query.value or "")
        except GraphwrightError as exc:
            self._error(exc)
            return
        samples = await io(self.context.knowledge.sample_collections)
        with self.answer:
            show(found, {sample.ual for sample in samples})

    def _error(self, exc: GraphwrightError) -> None:
        with (
            self.answer,
            ui.row()
            .classes("w-full bg-red-100 text-red-950 p-3 rounded items-center no-wrap")
            .props('role="alert"')
            .mark("sparql-error")
            .props('data-testid="sparql-error"'),
        ):
            ui.icon("error").props('aria-hidden="true"')
            ui.label(str(exc)).classes("grow")
        position = (getattr(exc, "details", None) or {}).get("position")
        if position:
            self._mark(int(position["line"]), int(position["column"]))

    def _mark(self, line: int, column: int) -> None:
        """Show the line the parser stopped on with a caret under the column, and select that
        place in the editor, so the eye goes straight to it."""
        lines = (self.query.value or "").split("\n")
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        with self.answer:
            ui.label(f"Line {line}, column {column}").classes("font-medium").mark(
                "sparql-position"
            ).props('data-testid="sparql-position"')
            ui.html(
                f"<pre class='font-mono text-sm'>{html.escape(text)}\n"
                f"{' ' * (column - 1)}<mark aria-label='error here'>^</mark></pre>",
                sanitize=False,
            ).mark("sparql-marker").props('data-testid="sparql-marker"')
        offset = sum(len(previous) + 1 for previous in lines[: line - 1]) + column - 1
        ui.run_javascript(
            f"const box = document.querySelector('[data-testid=\"sparql-query\"] textarea')"
            f" || document.querySelector('textarea[data-testid=\"sparql-query\"]');"
            f"if (box) {{ box.focus(); box.setSelectionRange({offset}, {offset + 1}); }}"
        )


def show(answer: QueryAnswer, samples: set[str] | frozenset[str] = frozenset()) -> None:
    """The answer; a row that names a sample collection, one of its assets or their graphs
    (`samples`: the collections' UALs) says so in a last column."""
    if answer.form == "ask":
        ui.label(f"Answer: {'yes' if answer.boolean else 'no'}").classes("text-lg font-bold")
        return
    if answer.form == "graph":
        lines = (answer.triples or "").splitlines()
        ui.label(f"{len(lines)} triples").classes("font-medium")
        ui.code(answer.triples or "", language="turtle").classes("w-full text-sm")
        return
    count = f"{len(answer.rows)} row{'s' if len(answer.rows) != 1 else ''}"
    if answer.truncated:
        count += f" (cut at the row limit of {answer.row_limit})"
    ui.label(count).classes("font-medium").mark("sparql-count").props('data-testid="sparql-count"')
    columns = [{"name": v, "label": v, "field": v, "align": "left"} for v in answer.variables]
    rows = [
        {"_row": index, **{v: term_text(row.get(v)) for v in answer.variables}}
        for index, row in enumerate(answer.rows)
    ]
    marked = [names_sample(row, samples) for row in answer.rows]
    if any(marked):
        columns.append({"name": "_sample", "label": "Sample data", "field": "_sample"})
        for shown, sample in zip(rows, marked, strict=True):
            shown["_sample"] = "sample data" if sample else ""
    ui.table(columns=columns, rows=rows, row_key="_row", pagination=50).classes("w-full").props(
        "dense flat bordered wrap-cells"
    ).mark("sparql-table").props('data-testid="sparql-table"')


def names_sample(row: dict[str, Term], samples: set[str] | frozenset[str]) -> bool:
    """Whether an IRI in the row is a sample collection's UAL, or begins with one and a slash
    (its assets and their public graphs)."""
    for term in row.values():
        if term["type"] == "uri":
            value = term["value"]
            if value in samples or value.rsplit("/", 1)[0] in samples:
                return True
            if value.endswith("/public") and value.rsplit("/", 2)[0] in samples:
                return True
    return False


def term_text(term: Term | None) -> str:
    """A term as a person reads it: an IRI in angle brackets, a literal with its language."""
    if term is None:
        return ""
    if term["type"] == "uri":
        return f"<{term['value']}>"
    if term["type"] == "bnode":
        return f"_:{term['value']}"
    language = term.get("xml:lang")
    return f"{term['value']}@{language}" if language else term["value"]
