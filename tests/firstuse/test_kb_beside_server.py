"""Every `kb` command works while `graphwright serve` holds the embedded store (through the
server's API, with a token the command mints in the shared home), and prints the same as without
a server. Each subcommand runs both ways; the walk over the `kb` group makes a new subcommand
fail here until it is run both ways too."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from graphwright.auth.service import AuthService
from graphwright.cli import app
from graphwright.cli.kb import app as kb_app
from graphwright.db import Database
from graphwright.settings import get_settings
from tests.conftest import free_port, wait_until_serving

QUERY = (
    "SELECT ?name WHERE { GRAPH ?g { ?d a <http://schema.org/Drug> ; "
    "<http://schema.org/name> ?name } } ORDER BY ?name"
)


def drug(name: str) -> dict[str, str]:
    return {"@context": "https://schema.org/", "@id": f"https://example.org/{name}",
            "@type": "Drug", "name": name}  # fmt: skip


class Home:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = {"GRAPHWRIGHT_HOME": str(path), "GRAPHWRIGHT_OFFLINE": "true",
                    "GRAPHWRIGHT_TOKEN": None, "GRAPHWRIGHT_DATABASE_URL": None}  # fmt: skip
        self.ran: dict[bool, set[str]] = {True: set(), False: set()}
        self.server: subprocess.Popen[str] | None = None
        self.url = ""

    def kb(self, *args: str) -> str:
        get_settings.cache_clear()
        try:
            outcome = CliRunner().invoke(app, ["kb", *args], env=self.env, terminal_width=80)
        finally:
            get_settings.cache_clear()
        assert outcome.exit_code == 0, outcome.output
        self.ran[self.server is not None].add(args[0])
        return outcome.output

    def start(self) -> None:
        port = free_port()
        env = {**os.environ, "GRAPHWRIGHT_HOME": str(self.path), "GRAPHWRIGHT_OFFLINE": "true",
               "GRAPHWRIGHT_PORT": str(port)}  # fmt: skip
        self.server = subprocess.Popen(
            [sys.executable, "-m", "graphwright", "serve"], env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.url = f"http://127.0.0.1:{port}"
        wait_until_serving(self.url, self.server)

    def stop(self) -> None:
        assert self.server is not None
        self.server.terminate()
        self.server.communicate(timeout=60)
        self.server = None

    def file_request(self, name: str) -> str:
        db = Database(f"sqlite:///{self.path / 'graphwright.db'}")
        try:
            token = AuthService(db).mint(label="api user")
        finally:
            db.dispose()
        response = httpx.post(
            f"{self.url}/api/knowledge/requests",
            headers={"Authorization": f"Bearer {token}"},
            json={"content": drug(name), "title": name},
        )
        assert response.status_code == 201, response.text
        return response.json()["data"]["id"]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    home = Home(tmp_path / "home")
    yield home
    if home.server is not None:
        home.stop()


def reads(home: Home, ual: str, export: Path) -> dict[str, str]:
    """What each read command prints, by command, so a difference names its command."""
    said = {
        "get": home.kb("get", ual),
        "get nquads": home.kb("get", ual, "--format", "nquads"),
        "metadata": home.kb("metadata", ual),
        "query": home.kb("query", QUERY),
        "requests published": home.kb("requests", "--status", "published"),
        "requests": home.kb("requests"),
        "export": home.kb("export", "-o", str(export)).replace(str(export), "FILE"),
    }
    return {**said, "exported file": export.read_text()}


def test_every_kb_command_works_beside_the_server_and_prints_the_same(
    home: Home, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # A path longer than the 80 columns the commands print in (as CI's are), so that a path
    # broken over two lines shows here.
    tmp_path = tmp_path_factory.mktemp("a-folder-with-a-long-name-" + "x" * 60)
    aspirin = tmp_path / "aspirin.json"
    aspirin.write_text(json.dumps(drug("aspirin")))
    published = home.kb("publish", str(aspirin), "--title", "Aspirin").splitlines()
    assert published[0] == "Published 'Aspirin' as"
    ual = published[1]
    alone = reads(home, ual, tmp_path / "alone.nq")

    home.start()
    beside = reads(home, ual, tmp_path / "beside.nq")
    assert beside == alone
    # The sample data goes through the server (which holds the store); the user's aspirin stays.
    removed = home.kb("remove-sample-data").splitlines()
    assert removed[0] == "Removed 3 sample collections:"
    assert removed[1].endswith("  Sample drugs and their targets")
    names = home.kb("query", QUERY)
    assert names.count("aspirin") == 1 and "imatinib" not in names  # sample drugs are gone
    first, second, third, fourth = (home.file_request(n) for n in ("ibuprofen", "a", "b", "c"))
    pending = home.kb("requests")
    assert "4 requests" in pending and first in pending and "…" not in pending
    approved = home.kb("approve", first).splitlines()
    assert approved[0] == "Published 'ibuprofen' as"
    assert home.kb("reject", second, "--reason", "duplicate") == f"Rejected {second}.\n"
    metadata = json.loads(home.kb("metadata", approved[1]))
    assert metadata["approvedBy"] == f"cli:{getpass.getuser()}"  # as without a server
    paracetamol = tmp_path / "paracetamol.json"
    paracetamol.write_text(json.dumps(drug("paracetamol")))
    assert home.kb("publish", str(paracetamol)).startswith("Published 'paracetamol' as")
    before_stop = reads(home, approved[1], tmp_path / "before.nq")
    home.stop()

    assert reads(home, approved[1], tmp_path / "after.nq") == before_stop
    assert home.kb("approve", third).splitlines()[0] == "Published 'b' as"
    assert home.kb("reject", fourth, "--reason", "duplicate") == f"Rejected {fourth}.\n"
    assert home.kb("remove-sample-data") == "No sample data to remove.\n"

    every = set(typer.main.get_command(kb_app).commands)  # type: ignore[attr-defined]
    assert home.ran[True] == every and home.ran[False] == every
