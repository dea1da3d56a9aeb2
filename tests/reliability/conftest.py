import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def process_tmp(request):
    """A folder for tests that run other processes for minutes. Not under pytest's basetemp:
    pytest keeps only the 3 newest basetemp folders, so another pytest session starting on the
    same machine would delete it while the processes still use it."""
    folder = Path(tempfile.mkdtemp(prefix=f"dbt-paimon-{request.node.name[:40]}-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
