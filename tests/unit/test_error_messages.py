"""What dbt shows of an exception: its message without stacks, plans or task payloads; the
full text goes to Spark's log file."""
import pickle

import pytest
from pyspark.errors import AnalysisException, PythonException

from dbt.adapters.paimon import error_messages

from dbt.adapters.paimon.environments import spark_logs
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import task_errors


class WorkerFailure(PythonException):
    """A failed Python task as pyspark raises it: Spark's text holds the worker's traceback."""

    def __init__(self, text: str):
        super().__init__(message=text)
        self.text = text

    def __str__(self) -> str:
        return self.text


class QueryRefused(AnalysisException):
    def __init__(self, text: str):
        super().__init__(message=text)
        self.text = text

    def __str__(self) -> str:
        return self.text


WORKER_TEXT = """An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/site-packages/dbt/adapters/paimon/write/tasks.py", line 131, in route_task
    for rows in _validated(plan, batches):
                ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/site-packages/dbt/adapters/paimon/write/tasks.py", line 40, in _emit
    arrays = [table.column(f.name) for f in schema]
KeyError: 'amount'
"""


@pytest.fixture
def log_file(tmp_path, monkeypatch):
    path = str(tmp_path / "logs" / "spark.log")
    monkeypatch.setattr(spark_logs, "_path", path)
    return path


def test_a_python_task_failure_shows_its_exception_line_only():
    assert error_messages.summary(WorkerFailure(WORKER_TEXT)) == "KeyError: 'amount'"


def test_an_analysis_error_shows_its_message_without_the_plan():
    text = ("[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name `x` cannot be resolved. "
            "SQLSTATE: 42703; line 2 pos 7;\n'Project ['x AS id#15]\n+- Range (0, 3, step=1)\n")
    message = error_messages.summary(QueryRefused(text))
    assert message == ("[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name `x` cannot be "
                       "resolved. SQLSTATE: 42703; line 2 pos 7")


def test_a_java_stack_and_a_task_payload_never_reach_the_message():
    token = "@@dbt-paimon-task-error@@gASVLwEAAA==@@dbt-paimon-task-error@@"
    text = (f"Job aborted: boom {token}\n SQLSTATE: 38000\n"
            "\tat org.apache.spark.api.python.BasePythonRunner.handle(PythonRunner.scala:1)\n")
    message = error_messages.summary(RuntimeError(text))
    assert message == "Job aborted: boom \n SQLSTATE: 38000"


def test_spark_refusing_the_query_is_the_models_error(log_file):
    text = "[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012"
    assert error_messages.model_failure("orders", QueryRefused(text)) == f"Model 'orders': {text}"


def test_an_unexpected_error_names_its_type_and_where_its_trace_is(log_file):
    try:
        {}["amount"]
    except KeyError as exc:
        message = error_messages.model_failure("orders", exc)
    assert message.startswith("Model 'orders': unexpected error KeyError: 'amount'.")
    assert f"its full trace is in {log_file}" in message
    assert "Traceback" not in message
    log = open(log_file).read()
    assert "model 'orders' failed" in log and "Traceback" in log and 'KeyError' in log


def test_a_tasks_traceback_travels_with_its_exception_to_the_log(log_file):
    try:
        raise ValueError("bad cast in a task")
    except ValueError as exc:
        payload = task_errors.encode(exc)
    recovered = task_errors.decode(payload)
    error_messages.model_failure("orders", recovered)
    log = open(log_file).read()
    assert "In the Spark task:" in log and "raise ValueError" in log


def test_handled_errors_pickle_unchanged():
    error = PaimonDataError("Model 'orders': column 'id': NULL in a primary key")
    recovered = pickle.loads(task_errors.encode(error))
    assert type(recovered) is PaimonDataError and str(recovered) == str(error)


def test_a_metastore_held_by_another_process_says_what_to_do(log_file):
    text = ("org.apache.hadoop.hive.ql.metadata.HiveException: java.lang.RuntimeException: "
            "Unable to instantiate org.apache.hadoop.hive.ql.metadata.SessionHiveMetaStoreClient")
    message = error_messages.spark_failure(QueryRefused(text))
    assert "another dbt process" in message and "`spark_state_dir`" in message
    assert "HiveException" not in message


def test_our_own_error_in_a_task_is_its_message_alone(log_file):
    text = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
            '  File "/x/dbt/adapters/paimon/datasource/source.py", line 9, in read\n'
            "    raise PaimonDataError(problem)\n"
            "dbt.adapters.paimon.runtime.errors.PaimonDataError: Paimon table a.b: file lost\n")
    assert error_messages.summary(WorkerFailure(text)) == "Paimon table a.b: file lost"
    assert error_messages.spark_failure(WorkerFailure(text)) == "Paimon table a.b: file lost"


def test_a_bug_in_a_task_names_its_exception_without_our_module_path(log_file):
    text = WORKER_TEXT.replace("KeyError: 'amount'",
                               "dbt.adapters.paimon.format.bucket.BucketError: no bucket")
    message = error_messages.model_failure("orders", WorkerFailure(text))
    assert message.startswith("Model 'orders': unexpected error in a Spark Python task: "
                              "BucketError: no bucket.")


def test_a_value_error_our_code_raises_in_a_task_is_a_refusal_not_a_bug(log_file):
    text = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
            '  File "/x/pyspark/sql/worker/plan_data_source_read.py", line 3, in main\n'
            "    reader = data_source.reader(schema)\n"
            '  File "/x/dbt/adapters/paimon/datasource/source.py", line 9, in reader\n'
            "    raise ValueError(f'Paimon table {name} has no snapshot {sid}')\n"
            "ValueError: Paimon table a.b has no snapshot 99\n")
    assert error_messages.spark_failure(WorkerFailure(text)) == "Paimon table a.b has no snapshot 99"
    # the same error raised outside dbt-paimon's code is unexpected
    elsewhere = text.replace("/dbt/adapters/paimon/datasource/", "/pyarrow/")
    assert "unexpected error" in error_messages.spark_failure(WorkerFailure(elsewhere))


# A failed Python task as a Spark Connect client raises it (pyspark.errors.exceptions.connect.
# PythonException): the server's error class, the worker's traceback, then the SQL state.
CONNECT_WORKER_TEXT = """
  An exception was thrown from the Python worker. Please see the stack trace below.
[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/x/dbt/adapters/paimon/datasource/source.py", line 201, in read
    data = read_merged_split(table, partition.split, target.names)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/x/pyarrow/parquet/core.py", line 317, in __init__
    self.reader.open(
  File "pyarrow/error.pxi", line 92, in pyarrow.lib.check_status
pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer.
 SQLSTATE: 38000"""


def test_a_task_failure_over_spark_connect_drops_the_python_sql_state(log_file):
    message = error_messages.model_failure("orders", WorkerFailure(CONNECT_WORKER_TEXT))
    assert message.startswith("Model 'orders': unexpected error in a Spark Python task: "
                              "pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer. "
                              "Nothing was written;"), message
    assert "SQLSTATE" not in message
    ours = CONNECT_WORKER_TEXT.replace(
        "pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer.",
        "dbt.adapters.paimon.runtime.errors.PaimonDataError: Paimon table a.b: file lost")
    assert error_messages.spark_failure(WorkerFailure(ours)) == "Paimon table a.b: file lost"


class JobFailed(Exception):
    """A failed Spark job as py4j raises it: Spark's text, then the Java stack."""


FILE_GONE_TEXT = """An error occurred while calling o7528.collectToPython.
: org.apache.spark.SparkException: [FAILED_READ_FILE.FILE_NOT_EXIST] Encountered error while reading file file:///w/analytics.db/orders/dt=2024-01-03/bucket-0/data-5725e7c4-0.parquet. File does not exist. It is possible the underlying files have been updated.
You can explicitly invalidate the cache in Spark by running 'REFRESH TABLE tableName' command in SQL or by recreating the Dataset/DataFrame involved. SQLSTATE: KD001
	at org.apache.spark.sql.errors.QueryExecutionErrors$.fileNotExistError(QueryExecutionErrors.scala:882)
"""


def test_a_data_file_expired_under_a_native_read_names_the_table_and_the_retry(log_file):
    message = error_messages.model_failure("daily", JobFailed(FILE_GONE_TEXT))
    assert message.startswith("Model 'daily': ")
    assert ("Data file file:///w/analytics.db/orders/dt=2024-01-03/bucket-0/data-5725e7c4-0.parquet"
            " of Paimon table analytics.orders is gone") in message
    assert "Run the command again" in message
    assert "REFRESH TABLE" not in message and "at org.apache" not in message
    statement = error_messages.spark_failure(JobFailed(FILE_GONE_TEXT))
    assert "Paimon table analytics.orders is gone" in statement


# a native read of a damaged file under an in-process write (the driver waits on the job)
FILE_DAMAGED_TEXT = """An error occurred while calling o12188.getResult.
: org.apache.spark.SparkException: Exception thrown in awaitResult:
	at org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:53)
Caused by: org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///w/analytics.db/orders/bucket-0/data-1f.parquet.  SQLSTATE: KD001
	at org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFilesError(QueryExecutionErrors.scala:920)
Caused by: java.lang.RuntimeException: file:/w/analytics.db/orders/bucket-0/data-1f.parquet is not a Parquet file. Expected magic number at tail, but found [102, 105, 108, 101]
	at org.apache.parquet.hadoop.ParquetFileReader.readFooter(ParquetFileReader.java:565)
"""


def test_a_damaged_file_under_a_native_read_names_the_file_the_table_and_the_reason(log_file):
    message = error_messages.model_failure("daily", JobFailed(FILE_DAMAGED_TEXT))
    assert message.startswith("Model 'daily': Data file file:///w/analytics.db/orders/bucket-0/"
                              "data-1f.parquet of Paimon table analytics.orders cannot be read "
                              "(file:/w/analytics.db/orders/bucket-0/data-1f.parquet is not a "
                              "Parquet file. Expected magic number at tail"), message
    assert "roll analytics.orders back" in message
    assert "awaitResult" not in message and "at org.apache" not in message
    assert "cannot be read" in error_messages.spark_failure(JobFailed(FILE_DAMAGED_TEXT))
