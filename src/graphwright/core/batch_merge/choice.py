"""Which merge takes a set of files: the batch merge in DuckDB, or the accumulator.

The batch merge takes KGX TSV and JSON Lines files (pairs, a nodes- or edges-only file, one
JSON Lines stream). Other inputs, Node Normalizer equivalences (`normalize`), files holding
what only the accumulator merges by the rules (`Unbatchable`), and files that are not valid
(the accumulator's reader then names the line at fault) take the accumulator path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from graphwright.core.batch_merge.engine import BatchMerge
from graphwright.core.batch_merge.inputs import BatchInput
from graphwright.core.batch_merge.reading import Unbatchable
from graphwright.core.formats import PAIRED
from graphwright.core.graph import GraphFormatError

# (format, nodes file, edges file) when a path names a KGX pair of files, else None
PairFinder = Callable[[Path, str | None], tuple[str, Path, Path] | None]


def batch_inputs(
    files: list[Path], fmt: str | None, find_pair: PairFinder, *, normalize: bool = False
) -> list[BatchInput] | None:
    """The files as batch inputs, or None when the accumulator must merge them: `normalize`,
    or one of them is not a KGX line format."""
    if normalize:
        return None
    inputs = []
    for path in files:
        pair = find_pair(path, fmt)
        if pair is not None and pair[0] in PAIRED:
            pair_format, nodes, edges = pair
            inputs.append(
                BatchInput(
                    path.name,
                    pair_format,
                    nodes if nodes.is_file() else None,
                    edges if edges.is_file() else None,
                )
            )
        elif path.is_file() and fmt in (None, "kgx-jsonl") and path.suffix.lower() == ".jsonl":
            inputs.append(BatchInput(path.name, "kgx-jsonl", stream=path))
        else:
            return None
    return inputs


def merged_in_batch(
    inputs: list[BatchInput],
    *,
    key_by_source: bool,
    strict: bool,
    xref_equivalence: bool = False,
    memory_limit: str | None = None,
    temp_directory: Path | None = None,
    run: Callable[[BatchMerge], None] = BatchMerge.run,
) -> BatchMerge | None:
    """The merge, `run` (the caller closes it); None when the inputs need the accumulator, or
    are not valid (the accumulator reads the files again and says what is wrong, where).
    DuckDB keeps to `memory_limit` (its default: 80% of the machine's memory) and spills beyond
    it to a folder in `temp_directory` (the system's temporary folder)."""
    merge = BatchMerge(
        inputs,
        key_by_source=key_by_source,
        strict=strict,
        xref_equivalence=xref_equivalence,
        memory_limit=memory_limit,
        temp_directory=temp_directory,
    )
    try:
        run(merge)
    except (Unbatchable, GraphFormatError):
        merge.close()
        return None
    except BaseException:
        merge.close()
        raise
    return merge
