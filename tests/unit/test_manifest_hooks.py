"""What the adapter takes from dbt's manifest (manifest_hooks.py), on stand-in nodes: the
relations the project builds, and seeds ordered before the nodes reading their tables through
source()."""

from types import SimpleNamespace

from dbt.adapters.paimon.manifest_hooks import order_sources_after_seeds, project_relations


def _node(unique_id, kind, schema, alias, depends_on=(), materialized="table"):
    return SimpleNamespace(unique_id=unique_id, resource_type=kind, schema=schema, alias=alias,
                           name=alias, config=SimpleNamespace(materialized=materialized),
                           depends_on=SimpleNamespace(nodes=list(depends_on)))


def _manifest(*nodes, sources=()):
    return SimpleNamespace(nodes={n.unique_id: n for n in nodes},
                           sources={s.unique_id: s for s in sources})


def test_a_source_reader_depends_on_the_seed_loading_its_table():
    seed = _node("seed.p.customers", "seed", "RAW", "Customers")
    source = SimpleNamespace(unique_id="source.p.raw.customers", schema="raw",
                             identifier="customers")
    other = SimpleNamespace(unique_id="source.p.raw.orders", schema="raw", identifier="orders")
    model = _node("model.p.m", "model", "analytics", "m",
                  ["source.p.raw.customers", "source.p.raw.orders"])
    manifest = _manifest(seed, model, sources=[source, other])
    order_sources_after_seeds(manifest)
    assert model.depends_on.nodes == ["source.p.raw.customers", "source.p.raw.orders",
                                      "seed.p.customers"]
    order_sources_after_seeds(manifest)  # once only
    assert model.depends_on.nodes.count("seed.p.customers") == 1


def test_without_seeds_nothing_changes():
    model = _node("model.p.m", "model", "a", "m", ["source.p.raw.x"])
    order_sources_after_seeds(_manifest(model))
    assert model.depends_on.nodes == ["source.p.raw.x"]


def test_project_relations_leave_ephemeral_models_and_tests_out():
    nodes = _manifest(
        _node("seed.p.s", "seed", "Raw", "S"),
        _node("model.p.m", "model", "a", "m"),
        _node("model.p.e", "model", "a", "e", materialized="ephemeral"),
        _node("snapshot.p.snap", "snapshot", "snaps", "snap"),
        _node("test.p.t", "test", "a", "t"),
    ).nodes
    assert project_relations(nodes) == {("raw", "s"): ("seed", "S"), ("a", "m"): ("model", "m"),
                                        ("snaps", "snap"): ("snapshot", "snap")}
