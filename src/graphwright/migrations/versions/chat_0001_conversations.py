"""Chat: conversations, their messages, and the tool calls of each assistant message.

Revision ID: chat_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "chat_0001"
down_revision = None
branch_labels = ("chat",)
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "chat_conversations",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("title", sa.String(500), nullable=True),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("graph_seed", JSON, nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    )
    op.create_index("ix_chat_conversations_updated_at", "chat_conversations", ["updated_at"])
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(200),
            sa.ForeignKey("chat_conversations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("artifacts", JSON, nullable=False),
        sa.Column("graph_version", sa.Integer(), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.UniqueConstraint("conversation_id", "seq"),
    )
    op.create_table(
        "chat_tool_calls",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "message_id",
            sa.String(36),
            sa.ForeignKey("chat_messages.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("call_id", sa.String(200), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("server", sa.String(200), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("arguments", JSON, nullable=False),
        sa.Column("result_text", sa.Text(), nullable=False),
        sa.Column("is_error", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_index("ix_chat_tool_calls_message_id", "chat_tool_calls", ["message_id"])


def downgrade() -> None:
    op.drop_table("chat_tool_calls")
    op.drop_table("chat_messages")
    op.drop_table("chat_conversations")
