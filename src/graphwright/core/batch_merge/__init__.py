"""The columnar batch merge of KGX files in DuckDB: the accumulator's rules, out of core.

See docs/merge.md ("Batch merge of files"); `BatchMerge` is the entry point, and choice.py
decides which files it takes.
"""

from graphwright.core.batch_merge.choice import batch_inputs, merged_in_batch
from graphwright.core.batch_merge.engine import BatchMerge, MergeOutOfMemory, memory_limit
from graphwright.core.batch_merge.inputs import BatchInput
from graphwright.core.batch_merge.reading import Unbatchable

__all__ = [
    "BatchInput",
    "BatchMerge",
    "MergeOutOfMemory",
    "Unbatchable",
    "batch_inputs",
    "memory_limit",
    "merged_in_batch",
]
