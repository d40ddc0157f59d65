"""The header says who is signed in by the token's name (`token create --name`)."""

from __future__ import annotations

import pytest

from tests.web.conftest import Simulated


@pytest.mark.parametrize("name", ["Ada Lovelace", None])
async def test_the_web_header_shows_the_tokens_name(simulated: Simulated, name: str | None) -> None:
    await simulated.sign_in(**({"label": name} if name else {}))
    if name:
        await simulated.user.should_see(f"Signed in as {name}")
    else:
        await simulated.user.should_see("Signed in as unnamed token")
        await simulated.user.should_not_see("token:")
