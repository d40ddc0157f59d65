"""Artifacts: artifacts, their chunks and versions, and the per-context event log.

Revision ID: artifacts_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "artifacts_0001"
down_revision = None
branch_labels = ("artifacts",)
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TZ = sa.DateTime(timezone=True)
ID = sa.String(200)
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "artifact_contexts",
        sa.Column("context_id", ID, primary_key=True),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "artifacts",
        sa.Column("artifact_id", ID, primary_key=True),
        sa.Column("context_id", ID, nullable=False),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("media_type", ID, nullable=True),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("metadata", JSON, nullable=True),
        sa.Column("extensions", JSON, nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    )
    op.create_index("ix_artifacts_context_id", "artifacts", ["context_id"])
    op.create_index("ix_artifacts_task_id", "artifacts", ["task_id"])
    op.create_table(
        "artifact_chunks",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        sa.Column(
            "artifact_id",
            ID,
            sa.ForeignKey("artifacts.artifact_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("added_version", sa.Integer(), nullable=False),
        sa.Column("dropped_version", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("joins", sa.Boolean(), nullable=False),
        sa.Column("part", JSON, nullable=False),
    )
    op.create_index("ix_artifact_chunks_artifact_id_id", "artifact_chunks", ["artifact_id", "id"])
    op.create_table(
        "artifact_versions",
        sa.Column(
            "artifact_id",
            ID,
            sa.ForeignKey("artifacts.artifact_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("version", sa.Integer(), primary_key=True),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("operation", sa.String(16), nullable=False),
        sa.Column("last_chunk", sa.Boolean(), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("metadata", JSON, nullable=True),
        sa.Column("extensions", JSON, nullable=True),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_table(
        "artifact_events",
        sa.Column("context_id", ID, primary_key=True),
        sa.Column("sequence", sa.BigInteger(), primary_key=True),
        sa.Column("artifact_id", ID, nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("artifact_events")
    op.drop_table("artifact_versions")
    op.drop_index("ix_artifact_chunks_artifact_id_id", table_name="artifact_chunks")
    op.drop_table("artifact_chunks")
    op.drop_index("ix_artifacts_task_id", table_name="artifacts")
    op.drop_index("ix_artifacts_context_id", table_name="artifacts")
    op.drop_table("artifacts")
    op.drop_table("artifact_contexts")
