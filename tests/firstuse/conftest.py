from tests.graphmode.conftest import app, auth, client, token  # noqa: F401
