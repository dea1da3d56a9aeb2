"""Where pypaimon 2.1.0 cannot read tables written by other Paimon writers, or cannot write
what Paimon stores, mended in one place.

Imported first by every module of this package that uses pypaimon, so every process that reads
or writes through this package (the Spark driver and every worker) has it.

- Manifests written by Paimon 1.0 Java have no ``_VALUE_STATS_COLS`` field (it came later).
  pypaimon looks it up unconditionally and fails with KeyError. An absent field means what a
  NULL one means: the file keeps stats of every value column.
- A NULL in a VECTOR column (a fixed-size list in Arrow): Arrow's Parquet writer, which writes
  every Parquet file of pypaimon's writers, refuses a fixed-size list with a NULL slot inside
  the column ("Lists with non-zero length null components are not supported"), and with one
  at either end writes a file whose recorded Arrow schema pyarrow then cannot read back
  ("Expected all lists to be of size=2"). Parquet stores a VECTOR as a LIST either way, so the
  column is handed to the writer as a variable-size list whose NULL slots are empty: the
  file's Parquet schema and values are what Paimon stores, and a partial-update or
  aggregation row with no vector yet is written as NULL, as Paimon's writers write it. Both
  of pypaimon's Parquet writers get it: ``FileIO.write_parquet`` (a whole file) and
  ``SingleFileWriter`` (a file written batch by batch: column updates by row id).
- VARIANT shredding (`variant.shreddingSchema`): pypaimon's shredder works row by row in Python
  and converts a value of another type than its field's (or fails). A schema of objects and
  scalars is shredded by format/variant_shredder.py instead, vectorized and as Paimon's Java
  writer does; other schemas (arrays) keep pypaimon's, whose result is read back and refused when a
  value changed (``variant_shredder.check_lossless``).
- VARIANT shredding inferred per file (`variant.inferShreddingSchema`, Paimon's 'per-file' and
  'adaptive' modes): pypaimon 2.1 does not infer. ``DataWriter``, which writes every data
  file, gets each Parquet file's inferred schema (format/variant_inference.py,
  format/variant_adaptive.py) in its ``_variant_shredding`` just before writing the file, as
  it holds a configured one. A data-evolution table's column files (``update_by_row_id``)
  go through ``DataWriter`` too when such a table has VARIANT columns: pypaimon's streaming
  column-file writer, which it uses otherwise, shreds nothing.
- A data-evolution row-id range whose VECTOR column lies in several ``.vector`` files (what a
  compaction leaves, Paimon's or ops/data_evolution_compact.py's: the range's data files become
  one, its vector files stay; pypaimon's writer also rolls them at ``vector.target-file-size``).
  ``DataEvolutionSplitRead._create_union_reader`` (pypaimon/read/split_read.py) sets
  ``self.read_fields`` to one bunch's fields while it builds that bunch's reader and resets
  it to the whole read's after. A bunch of one file has its file reader made then; the files
  of a bunch of several (a vector bunch) are handed to ``MergeAllBatchReader`` as suppliers,
  called at the first read, when ``file_reader_supplier`` sees the whole read's fields: each
  vector file is read as if it held every column read, and the merge takes the one at the
  vector's place in the bunch: an error when it cannot be cast to a vector ("Unsupported cast
  from int64 to fixed_size_list"), NULL vectors with no error when it can (an ARRAY column
  kept in the data files, absent from the vector file). Paimon's Java reader gives each
  file's supplier its bunch's read type. The mend: the ``MergeAllBatchReader`` split_read.py
  builds bunch readers with calls its suppliers at once, as the one-file case already does,
  so every file reader is made with its bunch's fields (the files' footers are read when the
  range's reader is made, not file by file); readers left unread are closed with it.
"""

import numpy as np
import pyarrow as pa
from pypaimon.manifest.manifest_file_manager import ManifestFileManager


def _install() -> None:
    original = ManifestFileManager._get_value_stats_fields
    if getattr(original, "_dbt_paimon_compat", False):
        return

    def value_stats_fields(self, file_dict, file_schema):
        if "_VALUE_STATS_COLS" not in file_dict:
            file_dict = {**file_dict, "_VALUE_STATS_COLS": None}
        return original(self, file_dict, file_schema)

    value_stats_fields._dbt_paimon_compat = True
    ManifestFileManager._get_value_stats_fields = value_stats_fields
    for file_io in _parquet_writing_file_ios():
        _store_null_vectors_in(file_io)
    _stream_null_vectors()
    _shred_variants_vectorized()
    _infer_variant_shredding()
    _infer_variant_shredding_of_column_updates()
    _make_bunch_file_readers_at_once()


def storable_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with each fixed-size list field as a variable-size list of the same values."""
    return pa.schema([field.with_type(pa.list_(field.type.value_field))
                      if pa.types.is_fixed_size_list(field.type) else field
                      for field in schema], metadata=schema.metadata)


def storable_vectors(data, every: bool = False):
    """``data`` (an Arrow table or record batch) with each fixed-size list column that holds a
    NULL (``every``: each one) as a variable-size list of the same values, its NULL slots
    empty: what Arrow's Parquet writer stores (the same Parquet LIST as the fixed-size list's).
    Other columns, and data without such a column, are returned as they are."""
    for index, field in enumerate(data.schema):
        column = data.column(index)
        if pa.types.is_fixed_size_list(field.type) and (every or column.null_count):
            chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
            lists = pa.chunked_array([_empty_nulls(chunk) for chunk in chunks],
                                     pa.list_(field.type.value_field))
            if isinstance(data, pa.RecordBatch):
                data = pa.Table.from_batches([data])
            data = data.set_column(index, field.with_type(lists.type), lists)
    return data


def _empty_nulls(vectors: pa.FixedSizeListArray) -> pa.ListArray:
    valid = np.asarray(vectors.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    lengths = np.where(valid, vectors.type.list_size, 0)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = vectors.filter(pa.array(valid)).flatten()
    return pa.ListArray.from_arrays(pa.array(offsets), values,
                                    type=pa.list_(vectors.type.value_field),
                                    mask=pa.array(~valid))


def _parquet_writing_file_ios():
    """pypaimon's FileIO classes that write Parquet themselves (the others delegate to one)."""
    from pypaimon.filesystem.local_file_io import LocalFileIO
    from pypaimon.filesystem.pyarrow_file_io import PyArrowFileIO

    classes = [LocalFileIO, PyArrowFileIO]
    try:
        from pypaimon.filesystem.hdfs_native_file_io import HdfsNativeFileIO
    except ImportError:  # its optional dependencies are not installed
        pass
    else:
        classes.append(HdfsNativeFileIO)
    return classes


def _store_null_vectors_in(file_io) -> None:
    original = file_io.write_parquet
    if getattr(original, "_dbt_paimon_compat", False):
        return

    def write_parquet(self, path, data, *args, **kwargs):
        return original(self, path, storable_vectors(data), *args, **kwargs)

    write_parquet._dbt_paimon_compat = True
    file_io.write_parquet = write_parquet


class _ListVectorsWriter:
    """A ``pq.ParquetWriter`` opened on ``storable_schema``: each batch's vectors as lists."""

    def __init__(self, writer):
        self._writer = writer

    def write_table(self, data, *args, **kwargs):
        return self._writer.write_table(storable_vectors(data, every=True), *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._writer, name)


def _stream_null_vectors() -> None:
    from pypaimon.write.writer.single_file_writer import SingleFileWriter

    original = SingleFileWriter.__init__
    if getattr(original, "_dbt_paimon_compat", False):
        return

    def init(self, file_io, path, schema, *args, **kwargs):
        original(self, file_io, path, storable_schema(schema), *args, **kwargs)
        if self._writer is not None:
            self._writer = _ListVectorsWriter(self._writer)

    init._dbt_paimon_compat = True
    SingleFileWriter.__init__ = init


def _shred_variants_vectorized() -> None:
    from pypaimon.data import variant_shredding

    from dbt.adapters.paimon.format import variant_shredder

    original = variant_shredding.shred_variant_column
    if getattr(original, "_dbt_paimon_compat", False):
        return

    def shred_variant_column(column, obj_fields, target_type):
        if variant_shredder.shreds(obj_fields):
            return variant_shredder.shred(column, obj_fields, target_type)
        shredded = original(column, obj_fields, target_type)
        variant_shredder.check_lossless(column, shredded)
        return shredded

    shred_variant_column._dbt_paimon_compat = True
    shred_variant_column.pypaimon = original
    variant_shredding.shred_variant_column = shred_variant_column


def _infer_variant_shredding() -> None:
    from pypaimon.write.writer.data_writer import DataWriter

    from dbt.adapters.paimon.format import variant_inference

    original_init, original_write = DataWriter.__init__, DataWriter._write_data_to_file
    if getattr(original_init, "_dbt_paimon_compat", False):
        return

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._dbt_paimon_inference = variant_inference.inference_for(self)

    def write_data_to_file(self, data):
        inference = getattr(self, "_dbt_paimon_inference", None)
        if inference is None:
            return original_write(self, data)
        # this file's shredding, as pypaimon holds a configured one
        self._variant_shredding = inference.plan(data)
        try:
            written = original_write(self, data)
        finally:
            self._variant_shredding = {}
        inference.written()  # Paimon's adaptive mode keeps a file's evidence once it is written
        return written

    init._dbt_paimon_compat = write_data_to_file._dbt_paimon_compat = True
    init.pypaimon, write_data_to_file.pypaimon = original_init, original_write
    DataWriter.__init__, DataWriter._write_data_to_file = init, write_data_to_file


def _infer_variant_shredding_of_column_updates() -> None:
    """pypaimon 2.1 writes a data-evolution table's column files (``update_by_row_id``)
    through a streaming Parquet writer of its own unless the table needs its data writer (a
    configured `variant.shreddingSchema`, among others); that writer shreds nothing, so a
    table with `variant.inferShreddingSchema` got unshredded column files. Such a table's
    column files go through pypaimon's data writer (its other path), which infers them as
    every data file (``_infer_variant_shredding``)."""
    from pypaimon.write import table_update_by_row_id

    from dbt.adapters.paimon.format import variant_inference

    writer = table_update_by_row_id._RowIdUpdateFileWriter
    original = writer.__dict__["supports_table"].__func__
    if getattr(original, "_dbt_paimon_compat", False):
        return

    def supports_table(table):
        if variant_inference.enabled(table.options.options.to_map()) and \
                variant_inference.variant_columns(table):
            return False
        return original(table)

    supports_table._dbt_paimon_compat = True
    supports_table.pypaimon = original
    writer.supports_table = staticmethod(supports_table)


def _make_bunch_file_readers_at_once() -> None:
    from pypaimon.read import split_read
    from pypaimon.read.reader.concat_batch_reader import MergeAllBatchReader

    if getattr(split_read.MergeAllBatchReader, "_dbt_paimon_compat", False):
        return

    class ReadersMadeAtOnce(MergeAllBatchReader):
        """``MergeAllBatchReader`` whose readers are made when it is, by its suppliers."""

        _dbt_paimon_compat = True

        def __init__(self, reader_suppliers, *args, **kwargs):
            readers = [supplier() for supplier in reader_suppliers]
            super().__init__([lambda reader=reader: reader for reader in readers],
                             *args, **kwargs)

        def close(self) -> None:
            for unread in self._reader.queue:
                reader = unread()
                if reader is not None:
                    reader.close()
            super().close()

    ReadersMadeAtOnce.pypaimon = MergeAllBatchReader
    split_read.MergeAllBatchReader = ReadersMadeAtOnce


_install()
