"""The learner's last GPU and precision, remembered in the store's UI state.

No Textual here: the screens call these, and tests can check the store directly.
"""

from __future__ import annotations

from typing import Any, Protocol

GPU_KEY = "calc.gpu"
DTYPE_KEY = "calc.dtype"


class UiStore(Protocol):
    def get_ui(self, key: str, default: Any = None) -> Any: ...

    def set_ui(self, key: str, value: Any) -> None: ...


def recall(store: UiStore) -> tuple[str | None, str | None]:
    """(gpu, precision) last used, each None when never chosen or not a string."""
    gpu = store.get_ui(GPU_KEY, None)
    dtype = store.get_ui(DTYPE_KEY, None)
    return (gpu if isinstance(gpu, str) and gpu else None, dtype if isinstance(dtype, str) and dtype else None)


def remember(store: UiStore, gpu: str | None = None, dtype: str | None = None) -> None:
    """Store whichever of the two is given (and only when it changed: no write per keystroke)."""
    old_gpu, old_dtype = recall(store)
    if gpu and gpu != old_gpu:
        store.set_ui(GPU_KEY, gpu)
    if dtype and dtype != old_dtype:
        store.set_ui(DTYPE_KEY, dtype)
