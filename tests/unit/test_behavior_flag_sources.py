"""tests/behavior_flag_sources.py names a behavior flag's source as dbt_common's stack walk
does: rendered by dbt-adapters' own setter, every flag gets the same source either way."""
import inspect

from dbt.adapters.base.impl import DEFAULT_BASE_BEHAVIOR_FLAGS, BaseAdapter
from dbt_common import behavior_flags

from tests import behavior_flag_sources


class _Adapter:
    """What dbt-adapters' behavior setter reads of an adapter."""
    config = type("Config", (), {"flags": {"enable_truthy_nulls_equals_macro": True}})()
    _behavior_flags = [{"name": "adapter_flag", "default": False, "docs_url": ""}]


def _sources() -> list:
    adapter = _Adapter()
    BaseAdapter.behavior.fset(adapter, list(DEFAULT_BASE_BEHAVIOR_FLAGS))
    return [(flag.name, flag.setting, flag._behavior_change_event.flag_source)
            for flag in adapter._behavior._flags]


def test_the_frames_name_the_module_the_stack_walk_names(monkeypatch):
    monkeypatch.setattr(behavior_flags.BehaviorFlagRendered, "_default_source",
                        staticmethod(behavior_flag_sources.stack_walk_source))
    walked = _sources()
    assert [source for _, _, source in walked] == ["dbt.adapters.base.impl"] * 3

    behavior_flag_sources.install()

    def no_walk(*args, **kwargs):
        raise AssertionError("inspect.stack() walked")
    monkeypatch.setattr(inspect, "stack", no_walk)
    assert _sources() == walked
