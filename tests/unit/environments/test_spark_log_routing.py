"""A Spark Connect client's own messages go to the log file, not the terminal: pyspark's Spark
Connect logger (enabled by SPARK_CONNECT_LOG_LEVEL, with its own stderr handler) and warnings
raised in pyspark's modules. Other warnings are shown as before. A fresh Python process each
(logging and warnings are process-wide); no Spark."""

import os
import subprocess
import sys

CODE = """
import warnings
from dbt.adapters.paimon.environments import spark_logs
spark_logs.use_log_file({path!r}, connect=True)
from pyspark.sql.connect.logging import logger
logger.info("connect client: RPC deadlines")
warnings.warn_explicit("[RETRIES_EXCEEDED] retries exceeded", UserWarning,
                       filename={pyspark_file!r}, lineno=311)
warnings.warn_explicit("a warning of the user's own code", UserWarning,
                       filename="/home/user/models/thing.py", lineno=1)
"""


def test_connect_client_logs_and_pyspark_warnings_go_to_the_log_file(tmp_path):
    import pyspark

    log = tmp_path / "logs" / "spark.log"
    pyspark_file = os.path.join(os.path.dirname(pyspark.__file__), "sql", "connect", "client",
                                "retries.py")
    result = subprocess.run(
        [sys.executable, "-c", CODE.format(path=str(log), pyspark_file=pyspark_file)],
        capture_output=True, text=True, env={**os.environ, "SPARK_CONNECT_LOG_LEVEL": "info"})
    assert result.returncode == 0, result.stderr
    assert "RPC deadlines" not in result.stderr and "RETRIES_EXCEEDED" not in result.stderr
    assert "a warning of the user's own code" in result.stderr  # not ours to hide
    written = log.read_text()
    assert "connect client: RPC deadlines" in written
    assert "UserWarning: [RETRIES_EXCEEDED] retries exceeded" in written
