"""Identifiers: CURIE normalisation and the prefix priority that picks a merged node's id.

Tools write the same CURIE prefix in different cases (`ncbigene:7157`, `NCBIGene:7157`); the
prefix map restores the Biolink/Translator spelling. Unknown prefixes keep their case, and ids
that are not CURIEs are only trimmed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CANONICAL_PREFIXES: tuple[str, ...] = (
    "NCBIGene", "HGNC", "HGNC.FAMILY", "ENSEMBL", "UniProtKB", "PR", "MGI", "RGD", "ZFIN", "FB",
    "WB", "SGD", "CHEBI", "CHEMBL.COMPOUND", "CHEMBL.TARGET", "DRUGBANK", "DrugCentral",
    "PUBCHEM.COMPOUND", "PUBCHEM.SUBSTANCE", "UNII", "RXCUI", "KEGG.COMPOUND", "KEGG.PATHWAY",
    "HMDB", "INCHIKEY", "GTOPDB", "MONDO", "DOID", "HP", "MP", "OMIM", "OMIM.PS", "ORPHANET",
    "EFO", "NCIT", "MESH", "UMLS", "SNOMEDCT", "ICD10", "ICD9", "MEDDRA", "GO", "REACT",
    "WIKIPATHWAYS", "SMPDB", "PANTHER.FAMILY", "INTERPRO", "PFAM", "NCBITaxon", "UBERON", "CL",
    "FMA", "SO", "ECO", "RO", "PATO", "UO", "IAO", "BFO", "CLINVAR", "CAID", "DBSNP", "PMID",
    "PMC", "DOI", "ISBN", "biolink", "infores",
)  # fmt: skip

# Lower-cased prefix -> the canonical spelling.
PREFIX_MAP: dict[str, str] = {prefix.lower(): prefix for prefix in CANONICAL_PREFIXES}

# Which id leads a set of equivalent ids: earlier prefixes win, by kind of entity (genes,
# chemicals, diseases and phenotypes, processes and pathways, anatomy, taxa), with the broad
# cross-domain vocabularies (MESH, UMLS) last. Prefixes not listed come after all of these;
# ties are broken by the full id in lexicographic order, so the leader never depends on the
# order in which ids arrive.
PREFIX_PRIORITY: tuple[str, ...] = (
    "NCBIGene", "HGNC", "ENSEMBL", "UniProtKB", "PR", "MGI", "RGD", "ZFIN", "FB", "WB", "SGD",
    "PUBCHEM.COMPOUND", "CHEBI", "CHEMBL.COMPOUND", "DRUGBANK", "UNII", "RXCUI",
    "KEGG.COMPOUND", "HMDB", "INCHIKEY",
    "MONDO", "DOID", "OMIM", "ORPHANET", "HP", "EFO", "NCIT",
    "GO", "REACT", "KEGG.PATHWAY", "WIKIPATHWAYS",
    "UBERON", "CL", "NCBITaxon",
    "SNOMEDCT", "ICD10", "MEDDRA", "MESH", "UMLS",
)  # fmt: skip

_RANK: dict[str, int] = {prefix: rank for rank, prefix in enumerate(PREFIX_PRIORITY)}
_UNRANKED = len(PREFIX_PRIORITY)

_PMID_TEXT = re.compile(
    r"\s*(?:pmid\s*:?\s*|(?:https?://)?(?:www\.)?pubmed\.ncbi\.nlm\.nih\.gov/)(\d+)/?\s*",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\s*(\d+)\s*")


def normalize_curie(raw: str) -> str:
    """Trim `raw` and give a known CURIE prefix its canonical case.

    `ncbigene:7157` becomes `NCBIGene:7157`. DOI local parts are lower-cased, since DOIs are
    case-insensitive.
    """
    text = raw.strip()
    prefix, sep, local = text.partition(":")
    if not sep:
        return text
    canonical = PREFIX_MAP.get(prefix.strip().lower())
    if canonical is None:
        return text
    local = local.strip()
    if canonical == "DOI":
        local = local.lower()
    return f"{canonical}:{local}"


def prefix_rank(curie: str) -> tuple[int, str]:
    """Sort key of an id under PREFIX_PRIORITY: lower sorts first and leads."""
    prefix, sep, _ = curie.partition(":")
    return (_RANK.get(prefix, _UNRANKED) if sep else _UNRANKED + 1, curie)


def pick_leader(curies: Iterable[str]) -> str:
    """The id that represents a set of equivalent (normalised) ids."""
    return min(curies, key=prefix_rank)


def normalize_pmid(value: object, *, bare_digits: bool = False) -> str | None:
    """`PMID:<digits>` for a PMID written as `PMID:1`, `pmid: 1` or a PubMed URL, else None.

    With `bare_digits` (the value sits in a field that holds PMIDs), `"1"` and `1` count too.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"PMID:{value}" if bare_digits and value > 0 else None
    if not isinstance(value, str):
        return None
    match = _PMID_TEXT.fullmatch(value) or (_DIGITS.fullmatch(value) if bare_digits else None)
    return f"PMID:{int(match.group(1))}" if match else None
