"""`graphwright graph merge` on KGX files: the batch merge (core/batch_merge), with a progress bar.

Which files the batch merge takes is decided in `core/batch_merge/choice.py`; the others take
the accumulator path in `cli/graph.py`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from graphwright.cli.common import console
from graphwright.core.batch_merge import BatchInput, BatchMerge, merged_in_batch

PROGRESS_FROM_BYTES = 4 * 2**20  # show a progress bar for inputs above a few MB


def run_batch(
    inputs: list[BatchInput],
    *,
    key_by_source: bool,
    xref_equivalence: bool,
    strict: bool,
    memory_limit: str | None,
    temp_directory: Path | None,
) -> BatchMerge | None:
    """`merged_in_batch`, with a progress bar for large inputs (the caller closes the merge)."""
    size = sum(path.stat().st_size for item in inputs for path in item.paths())
    run = BatchMerge.run if size < PROGRESS_FROM_BYTES else partial(_run_with_progress, size=size)
    return merged_in_batch(
        inputs,
        key_by_source=key_by_source,
        xref_equivalence=xref_equivalence,
        strict=strict,
        memory_limit=memory_limit,
        temp_directory=temp_directory,
        run=run,
    )


def _run_with_progress(merge: BatchMerge, *, size: int) -> None:
    """Run the merge while a Rich bar shows its step and DuckDB's progress in that step."""
    done = threading.Event()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            merge.run()
        except BaseException as exc:  # re-raised in the calling thread
            failure.append(exc)
        finally:
            done.set()

    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"merging {size / 2**20:.0f} MB", total=100)
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        while not done.wait(0.2):
            percent = merge.query_progress()
            progress.update(
                task,
                description=f"merging {size / 2**20:.0f} MB: {merge.step}",
                completed=max(percent, 0),
            )
        thread.join()
    if failure:
        raise failure[0]


def write_json(merge: BatchMerge, path: Path) -> None:
    """The merged graph as seed graph JSON, streamed from DuckDB one item per line."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with temporary.open("wb") as stream, _WritingBehind(stream) as write:
            write(b'{\n  "nodes": [')
            _write_items(write, merge.node_batches())
            write(b'\n  ],\n  "links": [')
            _write_items(write, merge.link_batches())
            write(b"\n  ]\n}\n")
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _write_items(
    write: Callable[[bytes | pa.StringArray], None], batches: Iterator[pa.StringArray]
) -> None:
    """Each batch of texts is one write, joined in Arrow: no Python string per item."""
    separator = b"\n    "
    for texts in batches:
        if not len(texts):
            continue
        write(separator)
        write(texts)
        separator = b",\n    "


def _joined(texts: pa.StringArray) -> pa.Buffer:
    """A batch's texts as one buffer, an item per line."""
    lists = pa.ListArray.from_arrays([0, len(texts)], texts)
    return pc.binary_join(lists, ",\n    ")[0].as_buffer()


class _WritingBehind:
    """Writes to `stream` in order, in a thread of its own, at most `_PENDING` writes behind:
    joining a batch's texts and copying them into the file overlap DuckDB sorting the next
    ones. A failed write is raised by a later call, or on leaving."""

    _PENDING = 8

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="graph-writer")
        self._pending: deque[Future[int]] = deque()

    def __call__(self, data: bytes | pa.StringArray) -> None:
        self._pending.append(self._pool.submit(self._write, data))
        if len(self._pending) > self._PENDING:
            self._pending.popleft().result()

    def _write(self, data: bytes | pa.StringArray) -> int:
        return self._stream.write(data if isinstance(data, bytes) else _joined(data))

    def __enter__(self) -> _WritingBehind:
        return self

    def __exit__(self, failed: type[BaseException] | None, *_: object) -> None:
        try:
            if failed is None:
                for write in self._pending:
                    write.result()
        finally:
            self._pool.shutdown(cancel_futures=True)
