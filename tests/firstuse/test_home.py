"""GRAPHWRIGHT_HOME defaults to the user's data directory, not the current one, so a token made in
one folder works for a server started in another; both say which home they use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.errors import Unauthorized
from graphwright.settings import Settings

CLI = [sys.executable, "-m", "graphwright"]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=True
    )


def test_default_home_is_the_user_data_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHWRIGHT_HOME", raising=False)
    assert Settings(_env_file=None).home == Path(
        platformdirs.user_data_dir("graphwright", appauthor=False)
    )


def test_token_made_in_one_folder_works_from_another(tmp_path: Path) -> None:
    data = tmp_path / "xdg"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_DATA_HOME": str(data)}
    if "PYTHONPATH" in os.environ:  # the CLI runs the code under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir(), second.mkdir()
    made = run(["token", "create"], first, env)
    home = data / "graphwright"
    assert f"home {home}" in made.stdout.replace("\n", " ")
    token = made.stdout.strip().splitlines()[-1]
    assert not (first / ".graphwright").exists()
    db = Database(f"sqlite:///{home / 'graphwright.db'}")
    try:
        assert AuthService(db).authenticate(token)
    finally:
        db.dispose()
    listed = run(["token", "list"], second, env)
    assert "1 token" in listed.stdout
    run(["token", "revoke", "1"], second, env)
    assert "0 tokens" in run(["token", "list"], first, env).stdout
    assert "revoked" in run(["token", "list", "--all"], first, env).stdout


def test_an_unknown_token_names_the_home_it_was_looked_for_in(
    database: Database, tmp_path: Path
) -> None:
    service = AuthService(database, where=str(tmp_path))
    with pytest.raises(Unauthorized, match=f"no such token in {tmp_path}"):
        service.authenticate("gw_unknown")
