"""Configuration from `GRAPHWRIGHT_*` environment variables and an optional `.env` file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import platformdirs
from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

_LOOPBACK_FOR = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="GRAPHWRIGHT_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    home: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("graphwright", appauthor=False)),
        description="Where data lives: the user's data directory unless set.",
    )
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; defaults to SQLite in `home`."
    )
    host: str = "127.0.0.1"
    port: int = 8000
    max_body_bytes: int = Field(default=50 * 1024 * 1024, description="Largest accepted body.")
    trusted_proxies: list[str] = Field(
        default=[], description="Proxy addresses whose X-Forwarded-Proto/-For are believed."
    )
    secure_cookies: bool = Field(default=False, description="Secure cookies even over HTTP.")
    mcp_sessions_per_token: int = Field(
        default=32, ge=1, description="Open MCP sessions per token and server; the oldest goes."
    )
    mcp_sessions_max: int = Field(
        default=1_000, ge=1, description="Open MCP sessions per server, all tokens together."
    )
    # Graph write limits (graphmode/limits.py); a larger value gets a 422 naming field and limit.
    max_id_length: int = Field(default=500, ge=1, description="Node and edge ids, characters.")
    max_label_length: int = Field(default=10_000, ge=1, description="Labels, characters.")
    max_type_length: int = Field(default=200, ge=1, description="Node and edge types.")
    max_data_depth: int = Field(default=32, ge=1, description="Nesting depth of `data`.")
    max_data_bytes: int = Field(default=1_000_000, ge=1, description="`data` size as JSON.")
    max_bulk_items: int = Field(default=10_000, ge=1, description="Items in one bulk call.")

    model: str | None = Field(default=None, description="LLM as provider:model.")
    model_base_url: str | None = Field(
        default=None,
        description="The model's endpoint: an OpenAI-compatible server (vLLM, LM Studio, "
        "Ollama), an Ollama host, or an Azure OpenAI resource.",
    )
    model_api_key: SecretStr | None = Field(
        default=None, description="The model provider's API key (else its own variable)."
    )
    mcp_config: Path | None = None

    api_url: str | None = None
    token: SecretStr | None = None
    conversation: str | None = None

    offline: bool = Field(default=False, description="Use the bundled sample data only.")
    fetch_allow_hosts: list[str] = Field(
        default_factory=list, description="Hosts that URL tools may fetch even if private."
    )
    fetch_max_bytes: int = Field(default=5 * 1024 * 1024, description="Largest page to fetch.")
    fetch_timeout_seconds: float = Field(default=20.0, description="Timeout per fetched URL.")
    kg_api_url: str | None = Field(
        default=None, description="TRAPI endpoint (Translator/mediKanren) for the kg MCP server."
    )
    name_resolver_url: str | None = Field(
        default=None, description="Translator Name Resolution service for the kg MCP server."
    )
    node_normalizer_url: str = Field(
        default="https://nodenormalization-sri.renci.org/1.5",
        description="Translator Node Normalizer for `graph merge --normalize`.",
    )
    ncbi_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GRAPHWRIGHT_NCBI_API_KEY", "NCBI_API_KEY")
    )
    tavily_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("GRAPHWRIGHT_TAVILY_API_KEY", "TAVILY_API_KEY"),
        description="Tavily web search for the knowledge miner's discovery subagent.",
    )

    sparql_url: str | None = Field(
        default=None, description="A SPARQL 1.1 query endpoint to use as the knowledge base."
    )
    sparql_token: SecretStr | None = Field(
        default=None, description="A bearer token for the SPARQL server, if it asks for one."
    )
    sparql_update_url: str | None = Field(
        default=None, description="Its SPARQL Update endpoint; without it the base is read-only."
    )
    dkg_node_url: str | None = Field(
        default=None, description="A DKG v8 node (e.g. http://localhost:8900) as knowledge base."
    )
    dkg_blockchain: str = Field(default="hardhat1:31337", description="The DKG node's chain.")
    dkg_node_token: SecretStr | None = Field(default=None, description="The node's API token.")
    private_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("GRAPHWRIGHT_PRIVATE_KEY", "PRIVATE_KEY"),
        description="Wallet key that publishing to a DKG node signs with.",
    )
    kb_query_timeout_seconds: float = Field(
        default=10.0, gt=0, le=600, description="Time limit of one SPARQL query from tools."
    )
    kb_row_limit: int = Field(
        default=1000, ge=1, le=100_000, description="Rows one SPARQL answer holds at most."
    )
    kb_sample_data: bool = Field(
        default=True, description="Load the bundled sample assets into an empty embedded store."
    )
    warm_start: bool = Field(
        default=True,
        description="`graphwright serve` starts the chat's MCP servers (with a model) and the "
        "query workers in the background once up, not on first use.",
    )
    miner_runs_per_window: int = Field(
        default=10,
        ge=0,
        description="Knowledge-miner runs one token may start per window (0: no limit).",
    )
    miner_rate_window_seconds: float = Field(
        default=3600.0, gt=0, description="The knowledge-miner rate limit's window, seconds."
    )

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'graphwright.db').resolve()}"

    @property
    def api_base_url(self) -> str:
        """Where this server's REST API is reached: GRAPHWRIGHT_API_URL, else the bound host and
        port (a wildcard host by loopback). Graph tools' `databaseContext.apiBaseUrl`, the agent
        card's URL, and the terminal chat's default server."""
        if self.api_url:
            return self.api_url
        host = _LOOPBACK_FOR.get(self.host, self.host)
        return f"http://{host}:{self.port}"

    @property
    def knowledge_path(self) -> Path:
        return self.home / "kb"

    @property
    def miner_path(self) -> Path:
        """The miner's LangGraph store and checkpoints, when the database is not PostgreSQL."""
        return self.home / "miner.sqlite"

    @property
    def data_location(self) -> str:
        """Where tokens and graphs are kept, in words (a database URL without its password)."""
        if self.database_url:
            from sqlalchemy.engine import make_url  # SQLAlchemy is not every command's to load

            return make_url(self.database_url).render_as_string(hide_password=True)
        return f"home {self.home.resolve()}"

    @property
    def resolved_mcp_config(self) -> Path:
        return self.mcp_config or self.home / "mcp_servers.json"


@lru_cache
def get_settings() -> Settings:
    return Settings()
