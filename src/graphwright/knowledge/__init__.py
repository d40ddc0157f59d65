"""The knowledge base: DKG-compatible knowledge assets on an embedded Oxigraph store, a SPARQL 1.1
server or a real DKG v8 node, with publication requests that a person approves."""
