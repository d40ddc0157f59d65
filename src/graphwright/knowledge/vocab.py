"""The names a DKG v8 node writes, so that queries written for the DKG run here unchanged."""

from __future__ import annotations

DKG = "https://ontology.origintrail.io/dkg/1.0#"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SCHEMA = "http://schema.org/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
# graphwright's own metadata (who approved, which request): local names, never mistaken for DKG's.
GRAPHWRIGHT = "urn:graphwright:kb#"

CURRENT_GRAPH = "current:graph"
METADATA_GRAPH = "metadata:graph"

HAS_NAMED_GRAPH = DKG + "hasNamedGraph"
HAS_KNOWLEDGE_ASSET = DKG + "hasKnowledgeAsset"
PUBLISHED_BY = DKG + "publishedBy"
PUBLISHED_AT_BLOCK = DKG + "publishedAtBlock"
PUBLISH_TX = DKG + "publishTx"
PUBLISH_TIME = DKG + "publishTime"
BLOCK_TIME = DKG + "blockTime"
WAS_REVISION_OF = PROV + "wasRevisionOf"
APPROVED_BY = GRAPHWRIGHT + "approvedBy"
PUBLICATION_REQUEST = GRAPHWRIGHT + "publicationRequest"
SYNTHETIC = GRAPHWRIGHT + "synthetic"
COLLECTION_NUMBER = GRAPHWRIGHT + "collectionNumber"
STATES = SCHEMA + "states"
PUBLISHER_KEY = "did:dkg:publisherKey/"

# The DKG's local development chain (hardhat) and a fixed local storage contract: UALs minted by
# the embedded store say plainly that they are local, and never collide with a real chain's.
LOCAL_CHAIN = "hardhat1:31337"
LOCAL_CONTRACT = "0x0000000000000000000000000000000000000001"
# The publisher key of the embedded store: no wallet signs there, so it is the zero address.
LOCAL_PUBLISHER_ADDRESS = "0x0000000000000000000000000000000000000000"

# The DKG's documented pattern for reading every current knowledge asset.
CURRENT_PATTERN = f"""PREFIX dkg: <{DKG}>
SELECT ?s ?p ?o WHERE {{
  GRAPH <{CURRENT_GRAPH}> {{ ?g dkg:hasNamedGraph ?ka }}
  GRAPH ?ka {{ ?s ?p ?o }}
}}"""
