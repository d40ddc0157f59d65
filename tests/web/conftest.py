"""Web UI fixtures: a live graphwright server with the UI (tests.conftest.serve_in_thread), Debian's
Chromium through selenium and chromedriver, and NiceGUI's `User` simulation on the same pages.

NiceGUI keeps its pages in module-level state: each fixture that mounts the UI does so inside
`nicegui_reset_globals()`, and only one of them is alive at a time.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI
from nicegui import core, ui
from nicegui.functions.download import download
from nicegui.functions.navigate import Navigate
from nicegui.functions.notify import notify
from nicegui.storage import set_storage_secret
from nicegui.testing.general import nicegui_reset_globals, prepare_simulation
from nicegui.testing.user import User

from graphwright.app import create_app
from graphwright.settings import Settings
from graphwright.web import register_pages
from graphwright.web.context import WebContext
from tests.conftest import free_port, serve_in_thread

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,720",
)
# Screenshots go to GRAPHWRIGHT_SCREENSHOT_DIR (docs/ to refresh the README's), else a temp dir.
SCREENSHOTS = Path(os.environ.get("GRAPHWRIGHT_SCREENSHOT_DIR") or tempfile.gettempdir())


def mcp_config(home: Path, servers: dict[str, Any] | None = None) -> Path:
    """graphwright's own servers over stdio, less grants (not used here: one process less);
    `servers` adds entries or overrides them (`{"kg": {"disabled": True}}`)."""
    path = home / "mcp_servers.json"
    path.write_text(json.dumps({"mcpServers": {"grants": {"disabled": True}, **(servers or {})}}))
    return path


@pytest.fixture(scope="module")
def module_database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An empty SQLite database for a whole browser module. What a page shows does not depend on
    the SQL backend: the services and the API under the pages are tested on both backends, and
    each browser module run again on PostgreSQL cost the suite its whole run time again."""
    return f"sqlite:///{tmp_path_factory.mktemp('web-db') / 'test.db'}"


@dataclass
class LiveUI:
    url: str
    app: FastAPI
    token: str

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    def slash_turn(self, message: str) -> str:
        """A turn that runs a slash command in a new conversation; the conversation's id."""
        with self.api() as api:
            turn = api.post("/api/chat", json={"message": message, "stream": False})
        assert turn.status_code == 200, turn.text
        return str(turn.json()["data"]["conversationId"])


@contextmanager
def serve_ui(
    database_url: str,
    home: Path,
    *,
    prepare: Callable[[FastAPI], None] = lambda _app: None,
    servers: dict[str, Any] | None = None,
    **overrides: Any,
) -> Iterator[LiveUI]:
    """A live graphwright server with the UI on a free port; `prepare` sees the app first;
    `servers` adds to or overrides the MCP configuration (as `mcp_config`'s)."""
    port = free_port()
    settings = Settings(
        home=home,
        database_url=database_url,
        offline=True,
        model=None,
        port=port,
        api_url=f"http://127.0.0.1:{port}",
        mcp_config=mcp_config(home, servers),
        **overrides,
    )
    with nicegui_reset_globals():
        app = create_app(settings, web=True)
        prepare(app)
        with serve_in_thread(app, port) as url:
            yield LiveUI(url, app, app.state.auth_service.mint(label="web tester"))


@pytest.fixture(scope="module")
def live_ui(module_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveUI]:
    with serve_ui(module_database_url, tmp_path_factory.mktemp("web-home")) as live:
        yield live


def _chromium_missing() -> str | None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (Debian package {package}; `make test` installs it as root)"
    return None


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def live(live_ui: LiveUI) -> LiveUI:
    return live_ui


@contextmanager
def chromium(prefs: dict[str, Any] | None = None) -> Iterator[Any]:
    """Debian's Chromium, headless, through chromedriver, on a profile of its own."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="gw-chromium-")
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if prefs:
        options.add_experimental_option("prefs", prefs)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    missing = _chromium_missing()
    if missing:
        pytest.skip(missing)
    prefs = {"download.default_directory": str(downloads), "download.prompt_for_download": False}
    with chromium(prefs) as driver:
        driver.set_page_load_timeout(60)
        yield driver


# --- NiceGUI's User simulation ----------------------------------------------------------------


@asynccontextmanager
async def lifespan_in_own_task(app: Any) -> AsyncIterator[None]:
    """Run an app's lifespan in one task: its task groups must end where they began, and
    pytest-asyncio tears a fixture down in another task than the one that set it up."""
    started, stop = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(hold())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()  # raises what stopped the start-up
    try:
        yield
    finally:
        stop.set()
        await task


@dataclass
class Simulated:
    user: User
    app: FastAPI
    context: WebContext

    def token(self, **kwargs: Any) -> str:
        return self.app.state.auth_service.mint(**kwargs)

    async def sign_in(self, **kwargs: Any) -> str:
        token = self.token(**kwargs)
        await self.user.open("/signin")
        self.user.find(marker="token").type(token)
        self.user.find(marker="sign-in").click()
        # Up to 5 s: the default 0.3 s ran out once on a busy machine, the page drawn just after.
        await self.user.should_see("Conversations", retries=50)
        return token


@pytest.fixture
def mcp_servers() -> dict[str, Any]:
    """MCP config entries that `simulated` adds to the default ones; a test module overrides
    this fixture to start a test server or to leave graphwright's own servers out."""
    return {}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Settings that `simulated` starts its app with beyond its own (a test module overrides
    this fixture, e.g. to configure a model)."""
    return {}


@pytest_asyncio.fixture
async def simulated(
    tmp_path: Path, mcp_servers: dict[str, Any], settings_overrides: dict[str, Any]
) -> AsyncIterator[Simulated]:
    """The pages on a real app's services, driven by NiceGUI's `User` (no browser), on SQLite
    for the reason `module_database_url` gives."""
    settings = Settings(
        **{
            "home": tmp_path,
            "database_url": f"sqlite:///{tmp_path / 'test.db'}",
            "offline": True,
            "model": None,
            "mcp_config": mcp_config(tmp_path, mcp_servers),
            **settings_overrides,
        }
    )
    app = create_app(settings)
    async with lifespan_in_own_task(app):
        with nicegui_reset_globals():
            os.environ["NICEGUI_USER_SIMULATION"] = "true"
            try:
                context = WebContext.of(app.state)
                register_pages(context)
                prepare_simulation()
                set_storage_secret("simulated secret")
                async with lifespan_in_own_task(core.app):
                    transport = httpx.ASGITransport(core.app)
                    async with httpx.AsyncClient(
                        transport=transport, base_url="http://test"
                    ) as client:
                        yield Simulated(User(client), app, context)
            finally:
                # A `User` replaces these with its own; the browser tests after need the real ones
                # (a simulated navigate would send real pages' navigation to a closed client).
                os.environ.pop("NICEGUI_USER_SIMULATION", None)
                ui.navigate, ui.notify, ui.download = Navigate(), notify, download
