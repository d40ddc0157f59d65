"""A2A: the task table of a2a-sdk's DatabaseTaskStore, with conversation-sized context ids.

Revision ID: a2a_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "a2a_0001"
down_revision = None
branch_labels = ("a2a",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "a2a_tasks",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("context_id", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("last_updated", sa.DateTime(), nullable=True),
        sa.Column("status", sa.JSON(), nullable=False),
        sa.Column("artifacts", sa.JSON(), nullable=True),
        sa.Column("history", sa.JSON(), nullable=True),
        sa.Column("protocol_version", sa.String(16), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=True),
    )
    op.create_index("idx_a2a_tasks_owner_last_updated", "a2a_tasks", ["owner", "last_updated"])
    op.create_index("idx_a2a_tasks_context_id", "a2a_tasks", ["context_id"])


def downgrade() -> None:
    op.drop_table("a2a_tasks")
