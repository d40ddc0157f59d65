"""Bearer tokens for the API: minted, stored hashed, optionally scoped to one conversation."""
