// Starts a Hive Metastore 2.3 (the jars inside pyspark) for the Hive catalog tests
// (tests/hive_metastore_server.py runs this file with `java`, in source-file mode).
//
// Why not HiveMetaStore.main alone: its lock API (lock/check_lock/unlock, what Paimon's
// HiveCatalogLock calls) needs the metastore's transaction tables, which Hive creates with
// schematool's SQL scripts (not shipped in pyspark) or, only with hive.in.test=true, on start.
// But a test-mode metastore refuses locks without an operation type ("Bug:
// operationType=UNSET"), which is exactly what HiveCatalogLock sends. So the tables are made
// here, with Hive's own TxnDbUtil.prepDb (the DDL test mode runs), and the metastore then
// starts in its normal mode.
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

public class HiveMetastoreLauncher {
    public static void main(String[] args) throws Throwable {
        TxnDbUtil.prepDb(new HiveConf());
        HiveMetaStore.main(args);
    }
}
