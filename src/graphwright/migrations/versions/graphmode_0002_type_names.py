"""Graph Mode: node types in one spelling, their Biolink class name (`gene` -> `Gene`).

Nodes written before the service normalised types keep the spelling their writer gave, so one type
shows as several (`gene`, `Gene`, `biolink:Gene`). This rewrites each stored spelling, in the
nodes and in the stash, by the rule the service now applies to every write.

Revision ID: graphmode_0002
Revises: graphmode_0001
"""

import sqlalchemy as sa
from alembic import op

from graphwright.core.biolink import type_name

revision = "graphmode_0002"
down_revision = "graphmode_0001"
branch_labels = None
depends_on = None

TABLES = ("graph_nodes", "graph_node_stash")


def upgrade() -> None:
    conn = op.get_bind()
    for name in TABLES:
        table = sa.table(name, sa.column("type", sa.String()))
        spellings = conn.scalars(sa.select(table.c.type).distinct()).all()
        for spelling in spellings:
            # A type that is blank once tidied keeps the name an import gives an untyped node.
            tidy = type_name(spelling) or "Other"
            if tidy != spelling:
                conn.execute(table.update().where(table.c.type == spelling).values(type=tidy))


def downgrade() -> None:
    """Nothing to undo: the old spellings named the same types."""
