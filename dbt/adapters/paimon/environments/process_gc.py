"""Python's cyclic garbage collector in a dbt process: kept off the objects that live as long as
the process.

A fresh dbt command holds a few hundred thousand objects before it does any work: the modules,
classes and functions of dbt, mashumaro, pyspark (and, over Spark Connect, pandas, pyarrow,
grpc) and dbt-paimon. They stay alive until the process ends, yet each full collection walks all
of them again, and the interpreter's exit collects them once more before it ends. Measured on
the 2-core machine (``dbt show --inline "select 1"`` over Spark Connect), the full collections
after the adapter loads and the collection at exit came to about a seventh of the command's CPU
time.

``gc.freeze()`` moves every object alive at that moment out of the collector's sight (it is never
collected; Python's documentation recommends it after start-up for this reason). Frozen here:
- when dbt loads the adapter (everything imported so far) and when the Spark session has started
  (the Spark Connect client's libraries, or py4j's gateway): later collections walk only what the
  command creates; each happens once per process;
- again at exit, after the other exit handlers (atexit runs handlers in reverse order, and this
  one is registered before the Spark session's): the interpreter's final collection then has
  nothing to walk. The process is ending: memory goes back to the system as a whole, and only
  objects in reference cycles lose their ``__del__`` (Python does not promise it at exit).
"""

from __future__ import annotations

import atexit
import gc
import threading

_lock = threading.Lock()
_exit_registered = False


def freeze_long_lived() -> None:
    """Freeze what is alive now (a constant-time move of the collector's lists), and again at
    exit."""
    global _exit_registered
    with _lock:
        if not _exit_registered:
            atexit.register(gc.freeze)
            _exit_registered = True
    gc.freeze()
