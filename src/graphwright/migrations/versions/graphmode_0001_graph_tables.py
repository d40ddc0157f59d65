"""Graph Mode: projects, nodes, edges, change log, stash of undone imports.

Revision ID: graphmode_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "graphmode_0001"
down_revision = None
branch_labels = ("graphmode",)
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TZ = sa.DateTime(timezone=True)


def _node_columns() -> list[sa.Column]:
    return [
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.Column("position", JSON, nullable=True),
        sa.Column("created_version", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    ]


def _edge_columns() -> list[sa.Column]:
    return [
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("target", sa.String(500), nullable=False),
        sa.Column("label", sa.String(), nullable=True),
        sa.Column("type", sa.String(200), nullable=True),
        sa.Column("data", JSON, nullable=False),
        sa.Column("created_version", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    ]


def _project_fk() -> sa.ForeignKey:
    return sa.ForeignKey("graph_projects.id", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "graph_projects",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("conversation_id", sa.String(200), nullable=False, unique=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    )
    op.create_table(
        "graph_nodes",
        sa.Column("project_id", sa.Integer(), _project_fk(), primary_key=True),
        sa.Column("id", sa.String(500), primary_key=True),
        *_node_columns(),
    )
    op.create_index("ix_graph_nodes_type", "graph_nodes", ["project_id", "type"])
    op.create_index("ix_graph_nodes_created", "graph_nodes", ["project_id", "created_version"])
    op.create_table(
        "graph_edges",
        sa.Column("project_id", sa.Integer(), primary_key=True),
        sa.Column("id", sa.String(500), primary_key=True),
        *_edge_columns(),
        sa.ForeignKeyConstraint(
            ["project_id", "source"],
            ["graph_nodes.project_id", "graph_nodes.id"],
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id", "target"],
            ["graph_nodes.project_id", "graph_nodes.id"],
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_graph_edges_source", "graph_edges", ["project_id", "source"])
    op.create_index("ix_graph_edges_target", "graph_edges", ["project_id", "target"])
    op.create_index("ix_graph_edges_created", "graph_edges", ["project_id", "created_version"])
    op.create_table(
        "graph_changesets",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.Integer(), _project_fk(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("command", sa.String(50), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("forward", JSON, nullable=False),
        sa.Column("inverse", JSON, nullable=False),
        sa.Column("summary", JSON, nullable=False),
        sa.Column("undo_state", sa.String(10), nullable=True),
        sa.Column("target_version", sa.Integer(), nullable=True),
        sa.Column("dropped_versions", JSON, nullable=True),
        sa.UniqueConstraint("project_id", "version", name="uq_graph_changesets_version"),
    )
    op.create_index(
        "ix_graph_changesets_undo", "graph_changesets", ["project_id", "undo_state", "version"]
    )
    op.create_table(
        "graph_node_stash",
        sa.Column("project_id", sa.Integer(), _project_fk(), primary_key=True),
        sa.Column("stash_version", sa.Integer(), primary_key=True),
        sa.Column("id", sa.String(500), primary_key=True),
        *_node_columns(),
    )
    op.create_table(
        "graph_edge_stash",
        sa.Column("project_id", sa.Integer(), _project_fk(), primary_key=True),
        sa.Column("stash_version", sa.Integer(), primary_key=True),
        sa.Column("id", sa.String(500), primary_key=True),
        *_edge_columns(),
    )


def downgrade() -> None:
    for table in (
        "graph_edge_stash",
        "graph_node_stash",
        "graph_changesets",
        "graph_edges",
        "graph_nodes",
        "graph_projects",
    ):
        op.drop_table(table)
