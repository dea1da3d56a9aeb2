from dbt.adapters.base import AdapterPlugin

from dbt.adapters.paimon.credentials import PaimonCredentials
from dbt.adapters.paimon.impl import PaimonAdapter
from dbt.include import paimon

Plugin = AdapterPlugin(
    adapter=PaimonAdapter,  # type: ignore[arg-type]
    credentials=PaimonCredentials,
    include_path=paimon.PACKAGE_PATH,
    dependencies=["spark"],
)
