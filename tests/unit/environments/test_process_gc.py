"""process_gc: the collector leaves the objects of a dbt process's start-up alone, still collects
what the command creates, and freezes once more at exit after the later exit handlers (each case
in a fresh interpreter: freezing is process-wide)."""

import subprocess
import sys
import textwrap


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_loading_the_adapter_freezes_what_is_imported():
    out = run_python("""
        import gc
        before = gc.get_freeze_count()
        import dbt.adapters.paimon.plugin  # what dbt does when a profile says type: paimon
        print(before, gc.get_freeze_count())
    """)
    before, after = map(int, out.split())
    assert before == 0 and after > 10_000


def test_objects_created_later_are_still_collected():
    out = run_python("""
        import gc
        from dbt.adapters.paimon.environments import process_gc

        class Node:
            pass

        process_gc.freeze_long_lived()
        node = Node()
        node.itself = node  # a reference cycle: only the collector frees it
        del node
        print(gc.collect())
    """)
    assert int(out) >= 1


def test_the_exit_freeze_runs_once_after_later_exit_handlers():
    out = run_python("""
        import atexit, gc
        # registered first, so it runs last
        atexit.register(lambda: print("earliest handler", gc.get_freeze_count()))
        from dbt.adapters.paimon.environments import process_gc

        handlers = atexit._ncallbacks()
        process_gc.freeze_long_lived()
        process_gc.freeze_long_lived()
        print("exit handlers added", atexit._ncallbacks() - handlers)
        print("frozen", gc.get_freeze_count())
        alive_at_exit = [[] for _ in range(1000)]  # created after the freeze
        # like the Spark session's handlers, registered after the adapter loaded: they run first
        atexit.register(lambda: print("later handler", gc.get_freeze_count()))
    """)
    lines = [line.rsplit(" ", 1) for line in out.splitlines()]
    assert [name for name, _ in lines] == ["exit handlers added", "frozen", "later handler",
                                           "earliest handler"]
    added, frozen, later, earliest = (int(count) for _, count in lines)
    assert added == 1
    # frozen objects can only die (the count shrinks) until the exit freeze adds the later ones
    assert later <= frozen and earliest >= later + 1000
