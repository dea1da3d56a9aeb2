"""Which folders of a table's native reads (datasource/native_read.py) stay on disk: the file
lists and merged rows of the snapshot an entry reads and of the one before it, none once the
entry reads through the Python source, and no staging folder a killed process left."""
import os
import time

from dbt.adapters.paimon.datasource import native_read


def folders(root, *names):
    parent = root / "db" / "t"
    for name in names:
        (parent / name).mkdir(parents=True)
    return parent


def test_the_read_snapshot_and_the_one_before_keep_their_file_lists_and_merged_rows(tmp_path):
    parent = folders(tmp_path, *[f"{prefix}{n}.100-schema-0" for n in (1, 2, 3, 4)
                                 for prefix in ("snapshot-", "merged-")])
    keep = str(parent / "snapshot-3.100-schema-0")
    native_read.prune_file_lists(str(tmp_path), "db", "t", keep)
    # the kept snapshot, and the newest other one (a query may have just listed it)
    assert sorted(os.listdir(parent)) == ["merged-3.100-schema-0", "merged-4.100-schema-0",
                                          "snapshot-3.100-schema-0", "snapshot-4.100-schema-0"]
    native_read.prune_file_lists(str(tmp_path), "db", "t", None)
    assert os.listdir(parent) == []


def test_a_stale_staging_folder_is_deleted_and_a_recent_one_kept(tmp_path):
    parent = folders(tmp_path, ".staging-old", ".staging-new", "snapshot-1.1-schema-0")
    old = time.time() - native_read.STALE_STAGING_SECONDS - 60
    os.utime(parent / ".staging-old", (old, old))
    native_read.prune_file_lists(str(tmp_path), "db", "t", str(parent / "snapshot-1.1-schema-0"))
    assert sorted(os.listdir(parent)) == [".staging-new", "snapshot-1.1-schema-0"]


def test_a_merged_snapshot_reads_the_parquet_files_spark_wrote(tmp_path):
    folder = tmp_path / "merged-3.1-schema-0"
    folder.mkdir()
    for name, size in (("part-00001-x.snappy.parquet", 7), ("part-00000-x.snappy.parquet", 5),
                       (".part-00000-x.snappy.parquet.crc", 1), ("_SUCCESS", 0)):
        (folder / name).write_bytes(b"x" * size)
    plan = native_read.merged_snapshot(3, str(folder))
    assert plan.snapshot_id == 3 and plan.file_format == "parquet" and not plan.deleted
    assert plan.files == ((str(folder / "part-00000-x.snappy.parquet"), 5),
                          (str(folder / "part-00001-x.snappy.parquet"), 7))
    assert native_read.merged_snapshot(3, str(tmp_path / "missing")) is None
