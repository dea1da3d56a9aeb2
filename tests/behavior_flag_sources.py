"""dbt_common's behavior flags, named by their module without reading the stack's sources.

``BehaviorFlagRendered`` computes a default source for every flag it renders (even one that
names its own: the default is an argument of ``dict.get``) by walking ``inspect.stack()``,
which finds and reads the source file of every frame on the stack. Under pytest, whose stacks
are deep, that costs 18 ms a flag, twice per adapter construction: 2.1 s of the 117 s of
tests/functional/standard/test_incremental_suites.py alone on the quiet 2-core machine. The
source it finds is the first module on the stack outside dbt_common.behavior_flags; the frames'
globals name that module without reading any file. tests/conftest.py installs this for every
test process; tests/unit/test_behavior_flag_sources.py checks both give the same source."""
from __future__ import annotations

import sys

from dbt_common import behavior_flags

# dbt_common's own, kept for the unit test's comparison
stack_walk_source = behavior_flags.BehaviorFlagRendered._default_source


def first_module_outside_behavior_flags() -> str:
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if name and name != behavior_flags.__name__:
            return name
        frame = frame.f_back
    return "Unknown"


def install() -> None:
    behavior_flags.BehaviorFlagRendered._default_source = staticmethod(
        first_module_outside_behavior_flags)
