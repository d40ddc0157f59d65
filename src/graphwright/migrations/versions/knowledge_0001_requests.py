"""Knowledge: publication requests (and the private triples of what they published).

Revision ID: knowledge_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "knowledge_0001"
down_revision = None
branch_labels = ("knowledge",)
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "knowledge_requests",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("content", JSON, nullable=False),
        sa.Column("revision_of", sa.String(300), nullable=True),
        sa.Column("source", sa.String(200), nullable=True),
        sa.Column("conversation_id", sa.String(200), nullable=True),
        sa.Column("requested_by", sa.String(200), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("decided_at", TZ, nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("ual", sa.String(300), nullable=True),
        sa.Column("collection_number", sa.Integer(), nullable=True, unique=True),
        sa.Column("private_triples", JSON, nullable=True),
        sa.Column("synthetic", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    for column in ("status", "conversation_id", "created_at", "ual"):
        op.create_index(f"ix_knowledge_requests_{column}", "knowledge_requests", [column])


def downgrade() -> None:
    op.drop_table("knowledge_requests")
