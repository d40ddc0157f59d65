"""Alembic environment: runs on the connection that `graphwright.db.Database.migrate` passes in."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
