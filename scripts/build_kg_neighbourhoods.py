"""Give every gene the docs use a neighbourhood in the offline sample knowledge graph.

The docs add CDKN1A (NCBIGene:1026) to a graph and query TP53 and MDM2; CDKN1A had no node in
the sample graph. This adds it, with its best-known partners, as curated facts: each node and
link added here records its `source` (the publication that established the fact; identifiers
and names from NCBI Gene, a public-domain resource of the US National Library of Medicine).
Facts are not copyrighted; the sample graph as a whole stays "sample data" for offline use.

Run: python scripts/build_kg_neighbourhoods.py  (idempotent: re-running changes nothing)
"""

from __future__ import annotations

import json
from pathlib import Path

KG = Path(__file__).resolve().parents[1] / "src/graphwright/sources/sample_data/kg.json"
NCBI_GENE = "NCBI Gene (https://www.ncbi.nlm.nih.gov/gene/), public domain"
EL_DEIRY = (
    "el-Deiry WS et al. "
    "WAF1, a potential mediator of p53 tumor suppression. "
    "Cell 1993;75(4):817-825. "
    "PMID:8242752"
)
HARPER = (
    "Harper JW et al. "
    "The p21 Cdk-interacting protein Cip1 is a potent inhibitor of G1 cyclin-dependent kinases. "
    "Cell 1993;75(4):805-816. "
    "PMID:8242751"
)
WAGA = (
    "Waga S et al. "
    "The p21 inhibitor of cyclin-dependent kinases controls DNA replication "
    "by interaction with PCNA. "
    "Nature 1994;369(6481):574-578. "
    "PMID:7911228"
)
MOMAND = (
    "Momand J et al. "
    "The mdm-2 oncogene product forms a complex with the p53 protein "
    "and inhibits p53-mediated transactivation. "
    "Cell 1992;69(7):1237-1245. "
    "PMID:1535557"
)

NODES = [
    {
        "id": "NCBIGene:1026",
        "name": "CDKN1A",
        "category": "Gene",
        "description": "cyclin dependent kinase inhibitor 1A (p21)",
        "synonyms": ["p21", "p21WAF1", "CIP1", "WAF1", "cyclin dependent kinase inhibitor 1A"],
        "source": NCBI_GENE,
    },
    {
        "id": "NCBIGene:1017",
        "name": "CDK2",
        "category": "Gene",
        "description": "cyclin dependent kinase 2",
        "synonyms": ["cyclin dependent kinase 2"],
        "source": NCBI_GENE,
    },
    {
        "id": "NCBIGene:5111",
        "name": "PCNA",
        "category": "Gene",
        "description": "proliferating cell nuclear antigen",
        "synonyms": ["proliferating cell nuclear antigen"],
        "source": NCBI_GENE,
    },
]
LINKS = [
    ("NCBIGene:7157", "interacts with", "NCBIGene:1026", EL_DEIRY),  # p53 induces p21
    ("NCBIGene:1026", "physically interacts with", "NCBIGene:1017", HARPER),
    ("NCBIGene:1026", "physically interacts with", "NCBIGene:5111", WAGA),
    ("NCBIGene:1026", "participates in", "GO:0007049", HARPER),  # cell cycle
    ("NCBIGene:4193", "physically interacts with", "NCBIGene:7157", MOMAND),
]


def main() -> None:
    data = json.loads(KG.read_text())
    ids = {node["id"] for node in data["nodes"]}
    data["nodes"] += [node for node in NODES if node["id"] not in ids]
    ids |= {node["id"] for node in NODES}
    present = {(link["source"], link["label"], link["target"]) for link in data["links"]}
    for source, label, target, cited in LINKS:
        assert source in ids and target in ids, (source, target)
        if (source, label, target) not in present:
            data["links"].append(
                {
                    "source": source,
                    "target": target,
                    "label": label,
                    "evidence": [],
                    "source_publication": cited,
                }
            )
    KG.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
