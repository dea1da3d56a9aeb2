"""What the adapter takes from dbt's manifest (manifest_hooks.py), on stand-in nodes: the
relations the project builds, seeds ordered before the nodes reading their tables through
source(), and the readers of a table several partial_update models assemble ordered after all of
them."""

from types import SimpleNamespace

from dbt.adapters.paimon.manifest_hooks import (order_readers_after_shared_writers,
                                              order_sources_after_seeds, project_relations)


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


def _writer(unique_id, target, depends_on=()):
    node = _node(unique_id, "model", "analytics", unique_id.rsplit(".", 1)[1], depends_on,
                 materialized="partial_update")
    node.config.target = target
    return node


def test_a_reader_of_one_writer_runs_after_every_writer_of_the_shared_table():
    """The sample project's orders_wide: a data test of order_facts reads ship_status, a
    column order_shipments adds; run before that writer (more than one thread), it fails with
    UNRESOLVED_COLUMN."""
    facts = _writer("model.p.order_facts", "orders_wide", ["model.p.stg_orders"])
    payments = _writer("model.p.order_payments", "orders_wide")
    shipments = _writer("model.p.order_shipments", "analytics.ORDERS_WIDE")
    other = _writer("model.p.other_writer", "other_wide")  # a table of its own: no group
    test = _node("test.p.assert_wide", "test", "analytics", "assert_wide", ["model.p.order_facts"])
    mart = _node("model.p.mart", "model", "analytics", "mart",
                 ["model.p.order_payments", "model.p.other_writer"])
    manifest = _manifest(facts, payments, shipments, other, test, mart)
    order_readers_after_shared_writers(manifest)
    assert test.depends_on.nodes == ["model.p.order_facts", "model.p.order_payments",
                                     "model.p.order_shipments"]
    assert mart.depends_on.nodes == ["model.p.order_payments", "model.p.other_writer",
                                     "model.p.order_facts", "model.p.order_shipments"]
    # writers stay unordered among themselves (their builds take turns), and a second call
    # adds nothing
    assert facts.depends_on.nodes == ["model.p.stg_orders"] and payments.depends_on.nodes == []
    order_readers_after_shared_writers(manifest)
    assert test.depends_on.nodes.count("model.p.order_payments") == 1


def test_an_edge_that_would_make_a_cycle_is_left_out():
    """A writer built from a reader of the shared table: that reader runs before it (it reads
    the table as the writers before it left it), after the other writers."""
    first = _writer("model.p.first", "wide")
    reader = _node("model.p.reader", "model", "analytics", "reader", ["model.p.first"])
    between = _node("model.p.between", "model", "analytics", "between", ["model.p.reader"])
    last = _writer("model.p.last", "wide", ["model.p.between"])
    third = _writer("model.p.third", "wide")
    order_readers_after_shared_writers(_manifest(first, reader, between, last, third))
    assert reader.depends_on.nodes == ["model.p.first", "model.p.third"]
    assert last.depends_on.nodes == ["model.p.between"]


def test_a_single_writer_of_a_target_adds_nothing():
    only = _writer("model.p.only", "wide")
    reader = _node("model.p.reader", "model", "analytics", "reader", ["model.p.only"])
    order_readers_after_shared_writers(_manifest(only, reader))
    assert reader.depends_on.nodes == ["model.p.only"]
