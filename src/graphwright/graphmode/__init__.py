"""Graph Mode: one persistent, versioned knowledge graph per conversation."""
