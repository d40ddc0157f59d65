"""The batch merge normalises most ids in SQL: it gives what `normalize_curie` gives."""

from __future__ import annotations

import duckdb
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.core.batch_merge.identity import normalise_ids
from graphwright.core.ids import normalize_curie

PREFIXES = ["NCBIGene", "ncbigene", "EntrezGene", "DOI", "doi", "MONDO", "HGNC ", " hgnc",
            "http", "HTTPS", "foo", "", "GO", "uniprotkb"]  # fmt: skip
# ASCII, spaces and tabs, other whitespace Python strips (\xa0, \u2003, \x1c), other cases
LOCALS = st.text(alphabet=st.sampled_from("aZ09:/._- \t\xa0\u2003\x1cİßK"), max_size=8)
# a local id that repeats its namespace's banana or prefix (GO:GO:0032571, obi:OBI_0400109)
BANANAS = st.builds(lambda p, b, local: f"{p}:{b}{local}",
                    st.sampled_from(["GO", "go", "obi", "OBI", "MGI", "ncbigene"]),
                    st.sampled_from(["GO:", "go_", "OBI_", "obi:", "MGI:", "ncbigene:", "GO", ""]),
                    LOCALS)  # fmt: skip
IDS = st.one_of(
    BANANAS,
    st.builds(lambda p, s, local, pad: f"{pad}{p}{s}{local}{pad}", st.sampled_from(PREFIXES),
              st.sampled_from([":", "://", ""]), LOCALS, st.sampled_from(["", " ", "\t"])),
    st.text(max_size=10),
)  # fmt: skip


def _normalised(raws: list[str]) -> dict[str, str]:
    con = duckdb.connect()
    con.register("raws", pa.table({"raw": pa.array(raws, pa.string())}))
    normalise_ids(con, "SELECT raw FROM raws")
    return dict(con.execute("SELECT raw, norm FROM ids").fetchall())


@settings(max_examples=200, deadline=None)
@given(raws=st.lists(IDS, max_size=20))
def test_ids_normalised_in_sql_are_those_normalize_curie_gives(raws: list[str]) -> None:
    assert _normalised(raws) == {raw: normalize_curie(raw) for raw in raws}


def test_the_common_spellings() -> None:
    raws = ["ncbigene:7157", " EntrezGene: 7157 ", "DOI:10.1000/ABC", "foo:Bar", "MONDO:1",
            "http://purl.obolibrary.org/obo/MONDO_0001", "plain"]  # fmt: skip
    assert _normalised(raws) == {
        "ncbigene:7157": "NCBIGene:7157",
        " EntrezGene: 7157 ": "NCBIGene:7157",
        "DOI:10.1000/ABC": "doi:10.1000/abc",
        "foo:Bar": "foo:Bar",
        "MONDO:1": "MONDO:1",
        "http://purl.obolibrary.org/obo/MONDO_0001": "MONDO:0001",
        "plain": "plain",
    }
