"""The knowledge miner in the UI: the tag bar above the chat's messages, the runs page (each run
with its Agent Workspace and approvals), and the memory view where a person reads and edits each
tag's notes. Every action calls MinerService, as the REST API does."""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui
from pydantic import ValidationError
from starlette.responses import RedirectResponse

from graphwright.auth.models import Principal
from graphwright.errors import GraphwrightError, problems
from graphwright.miner import tags as domain
from graphwright.miner.memory import NOTE_FILES
from graphwright.miner.schemas import DEFAULT_ITERATIONS, MAX_ITERATIONS, MinerRequest
from graphwright.miner.service import NEEDS_MODEL, MinerService
from graphwright.web.common import SIGN_IN, frame, guarded, io, named, notify_error, signed_in
from graphwright.web.context import WebContext
from graphwright.web.miner_run import RunRecord
from graphwright.web.miner_workspace import Workspace

# Offered before any tag has notes: biomedical questions first, then seed 001's own examples.
SUGGESTED_TAGS = ("drug_targets", "clinical_trials", "genetics", "supply_chain", "general_risk")
RUNS_SHOWN = 50


def miner_banner(miner: MinerService) -> None:
    """Shown while the miner has no model: what to set. Approvals and memory still work."""
    if miner.model is not None:
        return
    with ui.row().classes("w-full bg-amber-100 text-amber-950 p-3 rounded items-center no-wrap"):
        ui.icon("info").props('aria-hidden="true"')
        ui.label(NEEDS_MODEL).classes("grow").mark("miner-model-banner").props(
            'data-testid="miner-model-banner"'
        )


class TagBar:
    """Seed 001's tag bar: toggle domain tags, add custom ones, show or hide the workspace, and
    mine the composer's text with the chosen tags."""

    def __init__(
        self,
        miner: MinerService,
        workspace: Workspace,
        *,
        known: list[str],
        composer_text: Callable[[], str],
        principal: Principal,
    ) -> None:
        self.miner = miner
        self.workspace = workspace
        self.composer_text = composer_text
        self.principal = principal
        self.selected: list[str] = []
        self.tags = list(dict.fromkeys([*SUGGESTED_TAGS, *known]))
        # Folded to one line until the person asks for the miner: most turns are plain chat.
        self.fold = (
            ui.expansion("Knowledge miner", icon="travel_explore")
            .props('dense header-class="text-sm px-2 min-h-0"')
            .classes("w-full")
        )
        self.fold.props('data-testid="open-miner"').mark("open-miner")
        with (
            self.fold,
            ui.row()
            .classes("w-full items-center gap-1 px-2")
            .mark("tag-bar")
            .props('data-testid="tag-bar"'),
        ):
            ui.label("Knowledge Miner tags").classes("text-sm")
            self.chips = ui.row().classes("items-center gap-1")
            self.custom = named(
                ui.input(placeholder="custom_tag").props(
                    'dense aria-label="Add a custom domain tag"'
                ),
                "custom-tag",
            ).classes("w-36")
            self.custom.on("keydown.enter", self._add_custom)
            named(
                ui.button(icon="add", on_click=self._add_custom).props(
                    'flat dense aria-label="Add the tag"'
                ),
                "add-tag",
            )
            ui.space()
            self.iterations = named(
                ui.number("Max iterations", value=DEFAULT_ITERATIONS, min=1, max=MAX_ITERATIONS)
                .props("dense")
                .classes("w-28"),
                "max-iterations",
            )
            mine = named(
                ui.button("Mine", icon="travel_explore", on_click=self._mine).props("dense"), "mine"
            )
            if miner.model is None:
                mine.disable()
                mine.tooltip(NEEDS_MODEL)
            named(
                ui.button("Workspace", on_click=workspace.toggle).props("dense outline"),
                "toggle-workspace",
            )
        self._draw()

    def _draw(self) -> None:
        self.chips.clear()
        with self.chips:
            for tag in self.tags:
                chosen = tag in self.selected
                style = "unelevated color=primary" if chosen else "outline"
                named(
                    ui.button(f"#{tag}", on_click=lambda t=tag: self.toggle(t)).props(
                        f'dense no-caps {style} aria-pressed="{str(chosen).lower()}"'
                    ),
                    f"tag-{tag}",
                )

    def toggle(self, tag: str) -> None:
        if tag in self.selected:
            self.selected.remove(tag)
        else:
            self.selected.append(tag)
        self._draw()

    def _add_custom(self) -> None:
        text = (self.custom.value or "").strip().lstrip("#")
        if not text:
            return
        try:
            tag = domain.checked_tags([text])[0]
        except GraphwrightError as exc:
            notify_error(str(exc))
            return
        if tag not in self.tags:
            self.tags.append(tag)
        if tag not in self.selected:
            self.selected.append(tag)
        self.custom.value = ""
        self._draw()

    @guarded
    async def _mine(self) -> None:
        query = self.composer_text().strip()
        if not query:
            notify_error("Type the question to mine in the message box first")
            return
        try:
            request = MinerRequest(
                query=query,
                domain_tags=list(self.selected),
                max_iterations=int(self.iterations.value or DEFAULT_ITERATIONS),
            )
        except ValidationError as exc:
            notify_error(problems(exc.errors())[0])
            return
        live = await self.miner.start_as(request, self.principal)
        self.workspace.follow(live.run_id)


def register(context: WebContext) -> None:
    @ui.page("/miner", title="Knowledge miner · graphwright")
    async def runs_page() -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        frame(context, principal, "Knowledge miner")
        miner_banner(context.miner)
        ui.link("Memory notes per tag", "/miner/memory").props('data-testid="memory-link"')
        page = await io(context.miner.list_runs, status=None, offset=0, limit=RUNS_SHOWN)
        with (
            ui.column()
            .classes("w-full gap-1 p-2")
            .mark("miner-runs")
            .props('data-testid="miner-runs"')
        ):
            if not page.runs:
                ui.label("No miner runs yet.")
            for run in page.runs:
                tags = " ".join(f"#{tag}" for tag in run.domain_tags) or "(global)"
                with ui.row().classes("w-full items-center gap-3"):
                    ui.link(run.query[:120], f"/miner/runs/{run.id}").props(
                        'data-testid="miner-run"'
                    )
                    ui.label(f"{run.status} · {tags} · {run.created_at:%Y-%m-%d %H:%M}").classes(
                        "text-xs text-gray-700"
                    )
        return None

    @ui.page("/miner/runs/{run_id}", title="Miner run · graphwright")
    async def run_page(run_id: str) -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        try:
            run = await io(context.miner.get_run, run_id)
        except Exception:
            frame(context, principal, "Not found")
            ui.label(f"No miner run '{run_id}'.")
            return None
        frame(context, principal, f"Miner run: {run.query[:60]}")
        miner_banner(context.miner)
        ui.link("All runs", "/miner")
        ui.label(run.query).classes("text-base")
        workspace = Workspace(context.miner, principal, link_to_run=False)
        workspace.on_stop = RunRecord().show  # below the live workspace
        workspace.follow(run.id)
        return None

    @ui.page("/miner/memory", title="Miner memory · graphwright")
    async def memory_page() -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        frame(context, principal, "Knowledge miner memory")
        MemoryView(context.miner, principal)
        return None


MEMORY_IS = (
    "Memory is what the knowledge miner keeps from one run to the next, per domain tag: "
    "discovery notes (patterns and useful sources), schema notes (entity types and mappings), "
    "validation rules, and optional SHACL shapes that its checks apply. A run reads its tags' "
    "notes first and appends what it learns; you can read and correct them here."
)
NO_MEMORY = (
    "No tag has notes yet. Start a miner run with a domain tag (the tag bar above a "
    "conversation's messages): its notes are created then."
)


class MemoryView:
    """Each tag's notes (discovery notes, schema notes, validation rules, shapes.ttl), to read
    and edit. Save is enabled once the open note has changed."""

    def __init__(self, miner: MinerService, principal: Principal) -> None:
        self.miner = miner
        self.principal = principal
        ui.label(MEMORY_IS).classes("text-sm px-2 max-w-4xl")
        with ui.row().classes("w-full no-wrap gap-4 p-2"):
            self.listing = (
                ui.column()
                .classes("w-80 gap-1")
                .mark("memory-tags")
                .props('data-testid="memory-tags"')
            )
            with ui.column().classes("grow gap-2"):
                self.title = (
                    ui.label("Pick a note")
                    .classes("font-bold")
                    .mark("memory-note-title")
                    .props('data-testid="memory-note-title"')
                )
                self.editor = named(
                    ui.textarea(on_change=self._changed)
                    .classes("w-full font-mono")
                    .props('rows=20 aria-label="The note\'s text"'),
                    "memory-editor",
                )
                self.editor.disable()
                self.save = named(ui.button("Save", on_click=self._save), "memory-save")
                self.save.disable()
        self.open: tuple[str, str] | None = None
        self.saved_text = ""
        ui.timer(0, self.reload, once=True)

    def _changed(self) -> None:
        changed = self.open is not None and (self.editor.value or "") != self.saved_text
        self.save.set_enabled(changed)

    @guarded
    async def reload(self) -> None:
        listing = await self.miner.memory()
        self.listing.clear()
        with self.listing:
            if not listing:
                named(ui.label(NO_MEMORY).classes("text-sm"), "memory-empty")
            for tag, notes in listing.items():
                ui.label(f"#{tag}").classes("text-sm font-semibold")
                present = {note.note: note for note in notes}
                for name in NOTE_FILES:
                    note = present.get(name)
                    label = NOTE_FILES[name] + (f" ({note.size} B)" if note else " (new)")
                    named(
                        ui.button(label, on_click=lambda t=tag, n=name: self.show(t, n)).props(
                            "flat dense no-caps align=left"
                        ),
                        f"note-{tag}-{name}",
                    )

    @guarded
    async def show(self, tag: str, note: str) -> None:
        try:
            content = (await self.miner.read_note(tag, note)).content
        except GraphwrightError:
            content = ""  # not written yet: saving creates it
        self.open = (tag, note)
        self.title.text = f"/memories/knowledge/{tag}/{NOTE_FILES[note]}"
        self.saved_text = content
        self.editor.value = content
        self.editor.enable()
        self._changed()

    @guarded
    async def _save(self) -> None:
        if self.open is None:
            return
        tag, note = self.open
        saved = await self.miner.write_note_as(tag, note, self.editor.value or "", self.principal)
        self.saved_text = saved.content
        self._changed()
        ui.notify(f"Saved {saved.path} ({saved.size} B)")
        await self.reload()
