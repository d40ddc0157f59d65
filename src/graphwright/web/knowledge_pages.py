"""The knowledge base pages: the assets list and an asset page (its JSON-LD, metadata and every
state). Every read goes through KnowledgeService, as the REST API's `/api/knowledge` does."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import orjson
from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.auth.models import Principal
from graphwright.auth.service import person
from graphwright.core.words import counted
from graphwright.errors import GraphwrightError
from graphwright.knowledge.schemas import AssetMetadata, SampleCollection
from graphwright.web.common import SIGN_IN, call, code, frame, guarded, io, named, signed_in
from graphwright.web.context import WebContext

PAGE_SIZE = 50
SECTIONS = {
    "/kb": "Assets",
    "/kb/sparql": "SPARQL",
    "/kb/requests": "Publication requests",
}


def asset_path(ual: str) -> str:
    return "/kb/asset/" + quote(ual, safe=":/")


def knowledge_frame(
    context: WebContext, principal: Principal, title: str, section: str
) -> ui.column:
    """The frame of a knowledge page, its section links, and the column its body goes in."""
    frame(context, principal, title)
    column = ui.column().classes("w-full max-w-6xl mx-auto gap-3 p-4")
    with column, ui.row().classes("gap-4").props('role="navigation" aria-label="Knowledge base"'):
        for path, name in SECTIONS.items():
            link = ui.link(name, path).classes("text-base")
            if path == section:
                link.classes("font-bold").props('aria-current="page"')
    return column


def register(context: WebContext) -> None:
    @ui.page("/kb", title="Knowledge base · graphwright")
    def assets_page() -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        with knowledge_frame(context, principal, "Knowledge base", "/kb"):
            AssetList(context, principal)
        return None

    @ui.page("/kb/asset/{ual:path}", title="Knowledge asset · graphwright")
    def asset_page(ual: str) -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        with knowledge_frame(context, principal, "Knowledge asset", ""):
            AssetPage(context, ual)
        return None


class AssetList:
    def __init__(self, context: WebContext, principal: Principal) -> None:
        self.context = context
        self.principal = principal
        self.sample_bar = ui.row().classes("w-full items-center gap-3")
        self.search = (
            ui.input("Search the assets' text", on_change=self.refresh)
            .props('clearable debounce=300 aria-label="Search the assets\' text"')
            .classes("w-full")
            .mark("kb-search")
            .props('data-testid="kb-search"')
        )
        self.rows = (
            ui.column().classes("w-full gap-1").mark("kb-assets").props('data-testid="kb-assets"')
        )
        ui.timer(0, self.refresh, once=True)

    @guarded
    async def refresh(self, *_: Any) -> None:
        text = (self.search.value or "").strip() or None
        found = await call(self.context.knowledge.collections(search=text, limit=PAGE_SIZE))
        self.rows.clear()
        with self.rows:
            if not found:
                ui.label("No knowledge assets yet." if text is None else "No asset matches.")
            for summary in found:
                with (
                    ui.card().classes("w-full").props("flat bordered"),
                    ui.row().classes("w-full items-center gap-3"),
                ):
                    ui.link(summary.name or summary.ual, asset_path(summary.ual)).classes(
                        "text-base font-medium"
                    ).mark("kb-asset-link").props('data-testid="kb-asset-link"')
                    ui.label(", ".join(short(t) for t in summary.types)).classes("text-sm")
                    ui.space()
                    if summary.synthetic:
                        ui.badge("sample data", color="grey-8")
                    when = f"{summary.publish_time:%Y-%m-%d %H:%M}" if summary.publish_time else ""
                    plural = "s" if summary.assets != 1 else ""
                    ui.label(f"{summary.assets} asset{plural} · {when}").classes(
                        "text-sm text-gray-700"
                    )
                    ui.label(summary.ual).classes("text-xs font-mono text-gray-700 w-full")
        await self._sample_control()

    async def _sample_control(self) -> None:
        """A way to remove the sample data, while there is some and the person may."""
        samples = await io(self.context.knowledge.sample_collections)
        self.sample_bar.clear()
        if not samples or not may_remove_samples(self.principal):
            return
        with self.sample_bar:
            ui.label(
                f"{counted(len(samples), 'collection')} here are sample data, shipped with "
                "graphwright to try it on."
            ).classes("text-sm")
            named(
                ui.button(
                    "Remove sample data",
                    icon="delete",
                    color="negative",
                    on_click=lambda: self.remove_samples(samples),
                ).props("outline"),
                "remove-sample-data",
            )

    @guarded
    async def remove_samples(self, samples: list[SampleCollection]) -> None:
        actor = person(self.principal, "Removing the sample data")
        with (
            ui.dialog() as dialog,
            named(ui.card().classes("w-[40rem] max-w-full"), "sample-dialog"),
        ):
            ui.label("Remove the sample data?").classes("text-lg font-bold")
            ui.label(
                f"This removes {counted(len(samples), 'sample collection')} from the knowledge "
                "base, for everyone who uses it. Your own assets stay, and the sample data is "
                "not loaded again."
            )
            with named(ui.element("ul").classes("list-disc pl-6 text-sm"), "sample-list"):
                for sample in samples:
                    with ui.element("li"):
                        ui.label(sample.title).classes("font-medium")
                        ui.label(sample.ual).classes("font-mono text-xs break-all")
            with ui.row():
                named(
                    ui.button(
                        "Remove sample data", color="negative", on_click=lambda: dialog.submit(True)
                    ),
                    "sample-confirm",
                )
                ui.button("Cancel", on_click=lambda: dialog.submit(None)).props("flat")
        if await dialog is None:
            return
        removal = await call(self.context.knowledge.remove_sample_data(actor=actor))
        ui.notify(f"Removed {counted(len(removal.removed), 'sample collection')}", type="positive")
        await self.refresh()


def may_remove_samples(principal: Principal) -> bool:
    try:
        person(principal, "Removing the sample data")
    except GraphwrightError:
        return False
    return True


def short(iri: str) -> str:
    """The last segment of an IRI, which reads as the type's name."""
    return iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


class AssetPage:
    def __init__(self, context: WebContext, ual: str) -> None:
        self.context = context
        self.ual = ual
        ui.label(ual).classes("font-mono text-sm break-all").mark("kb-ual").props(
            'data-testid="kb-ual"'
        )
        with ui.row().classes("w-full gap-4 items-start no-wrap max-lg:flex-wrap"):
            self.jsonld = ui.column().classes("grow min-w-0 max-w-full")
            with ui.column().classes("w-96 max-w-full gap-3"):
                self.metadata = (
                    ui.column().classes("w-full").mark("kb-metadata")
                    .props('data-testid="kb-metadata"')
                )  # fmt: skip
                self.states = (
                    ui.column().classes("w-full").mark("kb-states")
                    .props('data-testid="kb-states"')
                )  # fmt: skip
        ui.timer(0, self.load, once=True)

    @guarded
    async def load(self) -> None:
        knowledge = self.context.knowledge
        metadata = await call(knowledge.metadata(self.ual))
        document = await call(knowledge.get_jsonld(self.ual))
        states = await call(knowledge.states(self.ual))
        self._metadata(metadata)
        self._states(states, metadata.collection_ual)
        with self.jsonld:
            ui.label("JSON-LD").classes("text-lg font-bold")
            text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
            code(text, language="json").classes("w-full text-sm").mark("kb-jsonld").props(
                'data-testid="kb-jsonld"'
            )

    def _metadata(self, metadata: AssetMetadata) -> None:
        facts = [
            ("Collection", metadata.collection_ual),
            ("Publisher", metadata.publisher),
            ("Owner", metadata.owner),
            ("Published", f"{metadata.publish_time:%Y-%m-%d %H:%M:%S %Z}"
             if metadata.publish_time else None),
            ("Transaction", metadata.publish_tx),
            ("Block", metadata.published_at_block),
            ("Approved by", metadata.approved_by),
            ("Revises", metadata.revision_of),
            ("Later states", metadata.later_states),
            ("Sample data", "yes (synthetic)" if metadata.synthetic else None),
        ]  # fmt: skip
        with self.metadata:
            ui.label("Metadata").classes("text-lg font-bold")
            with ui.element("dl").classes("w-full text-sm"):
                for name, value in facts:
                    if value is None or value == "":
                        continue
                    with ui.element("dt").classes("font-medium"):
                        ui.label(name)
                    with ui.element("dd").classes("font-mono break-all mb-1 ml-0"):
                        ui.label(str(value))
            if len(metadata.knowledge_assets) > 1 or metadata.ual == metadata.collection_ual:
                ui.label("Knowledge assets").classes("font-medium")
                for asset in metadata.knowledge_assets:
                    ui.link(asset.rsplit("/", 1)[-1], asset_path(asset)).classes("text-sm mr-2")

    def _states(self, states: list[AssetMetadata], current: str) -> None:
        with self.states:
            ui.label("States, oldest first").classes("text-lg font-bold")
            for index, state in enumerate(states, start=1):
                when = f"{state.publish_time:%Y-%m-%d %H:%M}" if state.publish_time else ""
                with (
                    ui.row()
                    .classes("items-center gap-2 text-sm")
                    .mark("kb-state")
                    .props('data-testid="kb-state"')
                ):
                    ui.label(f"{index}.")
                    if state.collection_ual == current:
                        ui.label(f"this state {when}").classes("font-bold")
                    else:
                        ui.link(when or state.collection_ual, asset_path(state.collection_ual))
                    if state.approved_by:
                        ui.label(f"approved by {state.approved_by}").classes("text-gray-700")
