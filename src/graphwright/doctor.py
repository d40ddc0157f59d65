"""`graphwright doctor`: checks a setup, one line per check, with the fix for each failure.

The checks: the home folder, the database and its migrations, the knowledge base store (and
whether another process holds it), the model (one tiny call, with its latency), each MCP server
(it starts and lists its tools), the port, and Chromium for the UI tests. A check passes, fails,
or notes something that needs no fix (no model configured, no Chromium where no UI test runs).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.exc import SQLAlchemyError

from graphwright.chat.config import McpConfigError, load_mcp_servers
from graphwright.chat.mcp_manager import McpManager
from graphwright.core.words import counted
from graphwright.db import MIGRATIONS_DIR, make_engine
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.backends.stores import StoreUnavailable
from graphwright.llm import load_chat_model
from graphwright.server_record import running_server
from graphwright.settings import Settings

MODEL_TIMEOUT_SECONDS = 60.0
MCP_TIMEOUT_SECONDS = 120.0
FIX_UNEXPECTED = "the message says what went wrong; see the README's Configuration"


class Status(Enum):
    OK = "ok"
    NOTE = "note"  # nothing is broken; the line says what is missing and how to add it
    FAILED = "failed"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def run_checks(settings: Settings) -> list[Check]:
    """Every check, in order (the MCP servers one line each)."""
    checks = [
        _guarded("home", lambda: _home(settings)),
        _guarded("database", lambda: _database(settings)),
        _guarded("knowledge base", lambda: _knowledge_base(settings)),
        _guarded("model", lambda: asyncio.run(_model(settings))),
    ]
    try:
        checks.extend(asyncio.run(_mcp_servers(settings)))
    except Exception as exc:
        checks.append(Check("mcp servers", Status.FAILED, _first_line(exc), FIX_UNEXPECTED))
    checks += [_guarded("port", lambda: _port(settings)), _chromium()]
    return checks


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    """The check, or its failure as a line: a doctor reports what it finds, never a traceback."""
    try:
        return check()
    except Exception as exc:
        return Check(name, Status.FAILED, _first_line(exc), FIX_UNEXPECTED)


def _home(settings: Settings) -> Check:
    home = settings.home
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=home):
            pass
    except OSError as exc:
        return Check("home", Status.FAILED, f"{home}: {exc.strerror or exc}",
                     "set GRAPHWRIGHT_HOME to a folder you can write to")  # fmt: skip
    return Check("home", Status.OK, f"{home.resolve()} (writable)")


def _database(settings: Settings) -> Check:
    url = settings.resolved_database_url
    where = settings.data_location
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    known = {revision.revision for revision in script.walk_revisions()}
    try:
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                applied = set(MigrationContext.configure(conn).get_current_heads())
        finally:
            engine.dispose()
    except (SQLAlchemyError, OSError) as exc:
        return Check("database", Status.FAILED, f"{where}: {_first_line(exc)}",
                     "start the database, or fix GRAPHWRIGHT_DATABASE_URL")  # fmt: skip
    if unknown := applied - known:
        return Check("database", Status.FAILED,
                     f"{where}: migrated by a newer graphwright ({', '.join(sorted(unknown))})",
                     "update graphwright, or point GRAPHWRIGHT_DATABASE_URL at another "
                     "database")  # fmt: skip
    pending = set(script.get_heads()) - applied
    if not applied:
        return Check("database", Status.OK, f"{where}: new; graphwright serve creates its tables")
    if pending:
        return Check("database", Status.OK,
                     f"{where}: {len(pending)} migrations to apply at the next start")  # fmt: skip
    return Check("database", Status.OK, f"{where}: migrations up to date")


def _knowledge_base(settings: Settings) -> Check:
    try:
        backend = open_backend(settings)
    except StoreUnavailable as exc:
        server = running_server(settings.home)
        if server is not None:
            return Check("knowledge base", Status.OK,
                         f"held by graphwright serve at {server}; the kb commands go through "
                         "it")  # fmt: skip
        return Check("knowledge base", Status.FAILED, _first_line(exc),
                     "stop the other graphwright process that holds it")  # fmt: skip
    description = backend.description
    asyncio.run(backend.aclose())
    del backend  # an embedded store is released with its last reference
    return Check("knowledge base", Status.OK, f"{description} (free)")


async def _model(settings: Settings) -> Check:
    setup = load_chat_model(settings)
    if setup.model is None:
        notice = setup.notice or ""
        if not (settings.model or "").strip():
            return Check("model", Status.NOTE, "not configured", notice.split(": ", 1)[1])
        return Check("model", Status.FAILED, notice.split(";")[0], "see docs/chat.md#the-model")
    started = time.perf_counter()
    try:
        async with asyncio.timeout(MODEL_TIMEOUT_SECONDS):
            await setup.model.ainvoke("Reply with the single word OK.")
    except Exception as exc:  # each provider fails in its own way
        return Check("model", Status.FAILED, f"{settings.model}: {_first_line(exc)}",
                     "check GRAPHWRIGHT_MODEL_BASE_URL and GRAPHWRIGHT_MODEL_API_KEY "
                     "(docs/chat.md#the-model)")  # fmt: skip
    latency = time.perf_counter() - started
    return Check("model", Status.OK, f"{settings.model} answered in {latency * 1000:.0f} ms")


async def _mcp_servers(settings: Settings) -> list[Check]:
    try:
        servers = load_mcp_servers(settings)
    except McpConfigError as exc:
        return [Check("mcp servers", Status.FAILED, _first_line(exc),
                      f"fix {settings.resolved_mcp_config}")]  # fmt: skip
    manager = McpManager(servers)
    try:
        return list(await asyncio.gather(*(_mcp_server(manager, name) for name in servers)))
    finally:
        await manager.aclose()


async def _mcp_server(manager: McpManager, name: str) -> Check:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(MCP_TIMEOUT_SECONDS):
            tools, failures = await manager.tools([name])
    except TimeoutError:
        failures = {name: f"no answer in {MCP_TIMEOUT_SECONDS:.0f} s"}
    if name in failures:
        return Check(f"mcp {name}", Status.FAILED, failures[name],
                     "fix or disable it in the MCP config file (docs/chat.md)")  # fmt: skip
    seconds = time.perf_counter() - started
    return Check(
        f"mcp {name}", Status.OK, f"{counted(len(tools), 'tool')}, started in {seconds:.1f} s"
    )


def _port(settings: Settings) -> Check:
    where = f"{settings.host}:{settings.port}"
    with socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET) as sock:
        try:
            sock.bind((settings.host, settings.port))
        except OSError as exc:
            server = running_server(settings.home)
            if server is not None and server.endswith(f":{settings.port}"):
                return Check("port", Status.OK, f"{where}: graphwright serve runs there")
            return Check("port", Status.FAILED, f"{where}: {exc.strerror or exc}",
                         "stop what uses it, or set GRAPHWRIGHT_PORT")  # fmt: skip
    return Check("port", Status.OK, f"{where} is free")


def _chromium() -> Check:
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if not missing:
        return Check("chromium", Status.OK, "chromium and chromedriver for the UI tests")
    fix = "make browser (Debian's chromium and chromium-driver)"
    if os.geteuid() != 0:
        fix = "sudo apt-get install chromium chromium-driver"
    return Check("chromium", Status.NOTE,
                 f"{' and '.join(missing)} missing: the UI tests will be skipped", fix)  # fmt: skip


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
