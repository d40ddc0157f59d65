"""Universal Asset Locators: `did:dkg:<chain>:<chainId>/<contract>/<kcId>[/<kaId>]`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphwright.errors import InvalidInput

_UAL = re.compile(
    r"did:dkg:(?P<chain>[a-z0-9_-]+:[0-9]+)/(?P<contract>0x[0-9a-fA-F]{40})"
    r"/(?P<kc>[0-9]{1,18})(?:/(?P<ka>[0-9]{1,18}))?"
)


@dataclass(frozen=True, order=True)
class Ual:
    chain: str
    contract: str
    kc_id: int
    ka_id: int | None = None

    @classmethod
    def parse(cls, text: str) -> Ual:
        match = _UAL.fullmatch(text.strip())
        if not match:
            raise InvalidInput(
                f"'{text[:200]}' is not a UAL: expected "
                "did:dkg:<chain>:<chainId>/<contract 0x…>/<collection id>[/<asset id>]"
            )
        ka = match["ka"]
        return cls(match["chain"], match["contract"].lower(), int(match["kc"]), ka and int(ka))

    @property
    def collection(self) -> Ual:
        return Ual(self.chain, self.contract, self.kc_id)

    def asset(self, ka_id: int) -> Ual:
        return Ual(self.chain, self.contract, self.kc_id, ka_id)

    @property
    def is_collection(self) -> bool:
        return self.ka_id is None

    @property
    def public_graph(self) -> str:
        return f"{self}/public"

    def __str__(self) -> str:
        tail = "" if self.ka_id is None else f"/{self.ka_id}"
        return f"did:dkg:{self.chain}/{self.contract}/{self.kc_id}{tail}"
