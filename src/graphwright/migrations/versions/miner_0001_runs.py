"""Miner: knowledge-miner runs, their pending actions and decisions.

Revision ID: miner_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "miner_0001"
down_revision = None
branch_labels = ("miner",)
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "miner_runs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("thread_id", sa.String(700), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("domain_tags", JSON, nullable=False),
        sa.Column("max_iterations", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.String(200), nullable=False),
        sa.Column("caller", sa.String(200), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.Column("result", JSON, nullable=True),
        sa.Column("pending", JSON, nullable=False),
        sa.Column("decisions", JSON, nullable=False),
        sa.Column("workspace", JSON, nullable=True),
        sa.Column("events", JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
    )
    for column in ("thread_id", "status", "created_at", "caller"):
        op.create_index(f"ix_miner_runs_{column}", "miner_runs", [column])


def downgrade() -> None:
    op.drop_table("miner_runs")
