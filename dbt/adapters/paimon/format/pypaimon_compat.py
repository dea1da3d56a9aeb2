"""Where pypaimon 2.1.0 cannot read tables written by other Paimon writers, mended in one place.

Imported first by every module of this package that uses pypaimon, so every process that reads
or writes through this package (the Spark driver and every worker) has it.

- Manifests written by Paimon 1.0 Java have no ``_VALUE_STATS_COLS`` field (it came later).
  pypaimon looks it up unconditionally and fails with KeyError. An absent field means what a
  NULL one means: the file keeps stats of every value column.
"""

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


_install()
