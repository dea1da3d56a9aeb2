"""The changelog dbt-paimon writes for changelog-producer 'lookup', read by Apache Paimon 1.0 Java
as a streaming consumer reads it (PaimonPeer ``stream``: scan.mode from-snapshot) and by our
change reader: the same records with the same row kinds.

Paimon 1.0's streaming readers look for lookup changelogs only in COMPACT snapshots
(CompactionChangelogFollowUpScanner), which is why each run commits its changelog in a COMPACT
snapshot after its data. Paimon 1.0's *batch* ``incremental-between`` read is not compared: it
merges the change files of a bucket in sections, unlike current Paimon's raw change reads."""
from __future__ import annotations

import json
from collections import Counter

import pyarrow as pa

from dbt.adapters.paimon.datasource.changes import ChangeRange, read_changes
from dbt.adapters.paimon.ops.compact import compact_table
from test_java_reads_our_tables import make_table, write_run

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int32())])


def _run(rows, kinds):
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                     "name": pa.array([r[1] for r in rows], pa.string()),
                     "amount": pa.array([r[2] for r in rows], pa.int32()),
                     "op": pa.array(kinds, pa.string())})


def _java_stream(paimon_java, location, first, last):
    """Paimon Java's streaming read (what a consumer sees) of snapshots first..last."""
    out = paimon_java.run("stream", location.warehouse, location.name, first, last)
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return Counter((r["_row_kind"], r["id"], r["name"], r["amount"]) for r in rows)


def _our_changes(location, start, end, mode):
    rows = read_changes(location.open(), ChangeRange(start, end, mode)).to_pylist()
    return Counter((r["_row_kind"], r["id"], r["name"], r["amount"]) for r in rows)


def test_java_reads_our_lookup_changelog(spark, tmp_path, paimon_java):
    location = make_table(tmp_path, "orders", SCHEMA, ["id"],
                          options={"bucket": "2", "changelog-producer": "lookup"})
    write_run(spark, location, _run([(1, "a", 10), (2, "b", 20), (3, "c", 30)], ["+I"] * 3),
              "op")
    write_run(spark, location, _run([(1, "a", 11), (3, "c", 30), (4, "d", 40)],
                                    ["+U", "-D", "+I"]), "op")
    compact_table(spark, location, full=True)  # a COMPACT snapshot without changelog
    write_run(spark, location, _run([(3, "c", 33), (2, "b", 20)], ["+I", "+U"]), "op")
    # run n: snapshot 2n-1 APPEND (data), 2n COMPACT (its changelog); 5: our full compaction
    ours = _our_changes(location, 0, 7, "changelog")
    assert ours == Counter([
        ("+I", 1, "a", 10), ("+I", 2, "b", 20), ("+I", 3, "c", 30),
        ("-U", 1, "a", 10), ("+U", 1, "a", 11), ("-D", 3, "c", 30), ("+I", 4, "d", 40),
        ("+I", 3, "c", 33), ("-U", 2, "b", 20), ("+U", 2, "b", 20)])
    # a Java streaming consumer sees exactly these records
    assert _java_stream(paimon_java, location, 1, 7) == ours
    assert _java_stream(paimon_java, location, 3, 4) == _our_changes(location, 2, 4, "changelog")
