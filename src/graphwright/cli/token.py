"""`graphwright token ...`: mint bearer tokens for the API."""

from __future__ import annotations

import getpass
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from graphwright.cli.common import (
    PlainCommand,
    PlainGroup,
    bad_input_exits,
    console,
    fail,
    print_rows,
)
from graphwright.core.words import counted
from graphwright.settings import Settings, get_settings

if TYPE_CHECKING:
    from graphwright.auth.service import AuthService

app = typer.Typer(
    help="Mint, list and revoke bearer tokens for the API.", no_args_is_help=True, cls=PlainGroup
)

_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@contextmanager
def _auth(settings: Settings) -> Iterator[AuthService]:
    """The token service on the configured database (loaded here: the CLI's other commands need
    no database)."""
    from graphwright.auth.service import AuthService
    from graphwright.db import Database

    db = Database(settings.resolved_database_url)
    try:
        yield AuthService(db)
    finally:
        db.dispose()


def parse_ttl(text: str) -> timedelta:
    """`90`, `90s`, `15m`, `12h`, `30d`, `2w` -> a timedelta."""
    match = _DURATION.match(text.lower())
    if match is None or int(match.group(1)) == 0:
        raise fail(f"--ttl: {text!r} is not a duration such as 30m, 12h or 7d")
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


@app.command("create", cls=PlainCommand)
def create(
    conversation: Annotated[
        str | None, typer.Option(help="Limit the token to this conversation.")
    ] = None,
    ttl: Annotated[
        str | None, typer.Option(help="Time to live, e.g. 30m, 12h, 7d (default: no expiry).")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="The token's name: the web UI shows it, and what it does is recorded as done "
            "by it (default: your login name).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Mint a token and print it alone on the last line (it is shown only once)."""
    lifetime = parse_ttl(ttl) if ttl else None
    settings = get_settings()
    name = (name or "").strip() or getpass.getuser()
    with bad_input_exits("token"), _auth(settings) as auth:
        token = auth.mint(conversation_id=conversation, ttl=lifetime, label=name)
    console.print(f"Using {settings.data_location}", highlight=False, soft_wrap=True)
    scope = f"conversation '{conversation}'" if conversation else "every conversation"
    expiry = f", expires in {ttl}" if ttl else ""
    console.print(
        f"Token '{escape(name)}' for {scope}{expiry}. Send it as 'Authorization: Bearer <token>'.",
        soft_wrap=True,
    )
    print(token)


@app.command("list", cls=PlainCommand)
def list_tokens(
    everything: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Also the revoked and expired tokens, and those graphwright mints for itself.",
        ),
    ] = False,
) -> None:
    """List the active tokens people made: ids, names, scopes, expiry (never the tokens)."""
    settings = get_settings()
    with bad_input_exits("token"), _auth(settings) as auth:
        tokens = auth.list_tokens(everything=everything)
    console.print(f"Using {settings.data_location}", highlight=False, soft_wrap=True)
    now = datetime.now(UTC)
    columns = ["id", "name", "conversation", "created", "expires"]
    if everything:
        columns += ["state", "minted by graphwright for"]
    rows = []
    for info in tokens:
        row = [
            str(info.id),
            info.label or "",
            info.conversation_id or "(any)",
            f"{info.created_at:%Y-%m-%d %H:%M}",
            f"{info.expires_at:%Y-%m-%d %H:%M}" if info.expires_at else "never",
        ]
        if everything:
            row += [info.state(now), info.purpose or ""]
        rows.append(row)
    print_rows(columns, rows)
    more = "" if everything else " (--all adds revoked, expired and internal ones)"
    console.print(f"{counted(len(tokens), 'token')}{more}", highlight=False)


@app.command("revoke", cls=PlainCommand)
def revoke(
    token_id: Annotated[int, typer.Argument(help="The id `graphwright token list` shows.")],
) -> None:
    """Revoke a token by its id; requests with it get 401 from then on."""
    settings = get_settings()
    with bad_input_exits("token"), _auth(settings) as auth:
        auth.revoke(token_id)
    console.print(f"Revoked token {token_id} ({settings.data_location}).", highlight=False)
