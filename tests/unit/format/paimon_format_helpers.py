"""Shared helpers of the format tests (tables, pypaimon reference writes and reads)."""

import pyarrow as pa

ORDERS = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("name", pa.string()),
                    ("amount", pa.float64())])


def pypaimon_write(table, data: pa.Table):
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    commit = builder.new_commit()
    write.write_arrow(data)
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


def pypaimon_read(table, columns=None) -> pa.Table:
    builder = table.new_read_builder()
    if columns:
        builder = builder.with_projection(columns)
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def orders(dt, ids, names=None, amounts=None):
    n = len(ids)
    return pa.table({
        "dt": pa.array([dt] * n, pa.string()),
        "id": pa.array(ids, pa.int64()),
        "name": pa.array(names if names is not None else [f"n{i}" for i in ids], pa.string()),
        "amount": pa.array(amounts if amounts is not None else [float(i) for i in ids],
                           pa.float64()),
    }, schema=ORDERS)


def records(data: pa.Table, kinds=None, seqs=None) -> pa.Table:
    n = data.num_rows
    return (data.append_column("_seq", pa.array(seqs if seqs is not None else range(n),
                                                pa.int64()))
            .append_column("_row_kind", pa.array(kinds or ["+I"] * n, pa.string())))


def sort_rows(table: pa.Table, keys=("dt", "id")):
    return table.sort_by([(k, "ascending") for k in keys]).to_pylist()
