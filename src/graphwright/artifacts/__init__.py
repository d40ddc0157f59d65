"""Artifacts: from tool results to one clean set of artifacts, and an A2A artifact store."""
