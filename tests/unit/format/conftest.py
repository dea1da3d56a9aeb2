import pytest

from dbt.adapters.paimon.catalog.warehouse import create_table
from paimon_format_helpers import ORDERS


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def pk_table(warehouse):
    """Partitioned primary-key table (dt, id), 2 buckets."""
    return create_table(warehouse, "db", "orders", ORDERS, primary_keys=["dt", "id"],
                        partition_keys=["dt"], options={"bucket": "2"})
