"""numpy arrays and byte strings as Arrow arrays and back, without copies.

The accumulator's serialisation and provenance hand whole columns to Arrow's kernels (take,
join, hash); they import this module when they first run, so that what only merges never loads
pyarrow. These helpers build the arrays from buffers directly: `pa.array()` and
`Array.to_numpy()` would import pandas, which costs more than the work itself on first use.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_EMPTY = b""
# Kernels allocate from the C library's heap, which keeps freed blocks for the next slice's
# arrays: Arrow's default (mimalloc) hands them back to the system within milliseconds, and
# touching fresh pages again cost more than the kernels' work (measured on a 1M-link graph).
POOL = pa.system_memory_pool()


def ints(values: np.ndarray) -> pa.Array:
    """A contiguous int64 numpy array as an Arrow array over the same memory."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def fixed_rows(rows: np.ndarray) -> pa.Array:
    """Each row of a contiguous 2-d array as one fixed-size binary value (for hashing rows)."""
    rows = np.ascontiguousarray(rows)
    width = rows.shape[1] * rows.itemsize
    return pa.Array.from_buffers(pa.binary(width), len(rows), [None, pa.py_buffer(rows)])


def take(values: pa.Array, indexes: np.ndarray) -> pa.Array:
    """`values[indexes[i]]` for each i."""
    return pc.take(values, ints(indexes), memory_pool=POOL)


def binaries(pieces: list[bytes]) -> pa.Array:
    """Byte strings as a large-binary array (one join, offsets from their lengths)."""
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=offsets[1:])
    return sliced_binaries(_EMPTY.join(pieces), offsets)


def sliced_binaries(data: bytes, offsets: np.ndarray) -> pa.Array:
    """The values `data[offsets[i]:offsets[i + 1]]` as a large-binary array over `data`."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_binary(), len(offsets) - 1, buffers)


def numpy_of(array: pa.Array, dtype: type) -> np.ndarray:
    """The values of a primitive Arrow array without nulls, as a read-only numpy view."""
    values = np.frombuffer(array.buffers()[1], dtype=dtype)
    return values[array.offset : array.offset + len(array)]


def offsets_of(array: pa.Array) -> np.ndarray:
    """The `len(array) + 1` value offsets of a large-binary array into its data buffer."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)
    return offsets[array.offset : array.offset + len(array) + 1]


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-d uint64 array, and the number of each row's value among them
    (told apart by hashing, not sorting)."""
    encoded = pc.dictionary_encode(fixed_rows(rows), memory_pool=POOL)
    dictionary, width = encoded.dictionary, rows.shape[1]
    values = np.frombuffer(dictionary.buffers()[1], dtype=np.uint64).reshape(-1, width)
    distinct = values[dictionary.offset : dictionary.offset + len(dictionary)]
    return distinct, numpy_of(encoded.indices, np.int32).astype(np.intp)
