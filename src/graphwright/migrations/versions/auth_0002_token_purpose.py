"""Auth: why graphwright minted a token for itself (NULL: a person's token).

Revision ID: auth_0002
Revises: auth_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "auth_0002"
down_revision = "auth_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("auth_tokens") as batch:
        batch.add_column(sa.Column("purpose", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("auth_tokens") as batch:
        batch.drop_column("purpose")
