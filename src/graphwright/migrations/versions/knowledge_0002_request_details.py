"""Knowledge: what a request's source recorded beside its content, and the canonical hash of
the content it validated.

Revision ID: knowledge_0002
Revises: knowledge_0001
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "knowledge_0002"
down_revision = "knowledge_0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("knowledge_requests", sa.Column("details", JSON, nullable=True))
    op.add_column("knowledge_requests", sa.Column("validated_hash", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("knowledge_requests", "validated_hash")
    op.drop_column("knowledge_requests", "details")
