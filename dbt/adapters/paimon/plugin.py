from dbt.adapters.base import AdapterPlugin

from dbt.adapters.paimon.environments import process_gc
from dbt.adapters.paimon.credentials import PaimonCredentials
from dbt.adapters.paimon.impl import PaimonAdapter
from dbt.include import paimon

Plugin = AdapterPlugin(
    adapter=PaimonAdapter,  # type: ignore[arg-type]
    credentials=PaimonCredentials,
    include_path=paimon.PACKAGE_PATH,
    dependencies=["spark"],
)

# dbt, pyspark and dbt-paimon are imported now: the collector need not walk them again
process_gc.freeze_long_lived()
