"""A numpy column that grows, for tables kept as columns (links, their evidence)."""

from __future__ import annotations

from typing import Any

import numpy as np


class Column:
    """A numpy array that grows by doubling, so that appending costs O(items appended)."""

    def __init__(self, dtype: Any) -> None:
        self._data = np.empty(64, dtype=dtype)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def array(self) -> np.ndarray:
        """The filled part (a view: writes reach the column)."""
        return self._data[: self._size]

    def extend(self, values: np.ndarray) -> None:
        end = self._size + len(values)
        if end > len(self._data):
            grown = np.empty(max(end, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size : end] = values
        self._size = end
