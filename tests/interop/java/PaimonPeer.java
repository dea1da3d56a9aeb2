/*
 * An independent Paimon reader/writer for dbt-paimon's interop tests, running on Apache Paimon
 * 1.0 Java (the jar bundled in the PyPI package paimon-python-ali==0.1.1; see
 * tests/interop/conftest.py, which downloads it and compiles this file with javac).
 *
 *   read    <warehouse> <db.table> [snapshotId]   every row of the (merged) batch read, one JSON line each
 *   bucket  <warehouse> <db.table>                 the same rows with "_bucket": the bucket of the split read
 *   write   <warehouse> <db.table> <jsonl file>    one commit of the file's rows; "_row_kind" (+I/-U/+U/-D) per row
 *                                                  (a cross-partition table: only while empty, each key once)
 *   compact <warehouse> <db.table>                 Paimon's own full compaction of every (partition, bucket)
 *   stream  <warehouse> <db.table> <from> <to>     a streaming read (scan.mode from-snapshot) of
 *                                                  snapshots from..to, each row with "_row_kind"
 *   create  <warehouse> <db.table> <json spec>      create the table: {"fields": [[name, SQL type]],
 *                                                  "primaryKeys": [], "partitionKeys": [], "options": {}}
 *   batch   <file>                                 several commands in one JVM: one JSON array of
 *                                                  arguments a line, each output ending with BATCH_END
 *   serve   <token>                                a long-lived peer: one command a line on standard
 *                                                  input (a JSON array of arguments, as in batch), each
 *                                                  run as the one-shot mode runs it, its result framed
 *                                                  on standard output; exits at the end of its input
 *   sketch  hll|theta|rbm32|rbm64 <v,v,...>        the serialized sketch / bitmap of the integers, as
 *                                                  Paimon's own test helpers build them (HllSketchUtil,
 *                                                  ThetaSketch, RoaringBitmap32/64), lowercase hex
 *   union   hll|theta|rbm32|rbm64 <hex>...         Paimon's aggregator (FieldHllSketchAgg, ...) folded
 *                                                  over the serialized inputs: agg(agg(a, b), c) ...
 *   system  <warehouse> <db.table> <name>          the system table <db.table>$<name> (snapshots, files, ...)
 *                                                  as Paimon's SystemTableLoader builds it: a first line
 *                                                  {"_fields": [[name, type], ...]} (Paimon SQL types),
 *                                                  then every row of its batch read, one JSON line each
 *   dvdelete <warehouse> <db.table> <column> <v>..  an append table with deletion vectors: one commit
 *                                                  marking every row whose column (BIGINT) is one of the
 *                                                  values deleted in its file's deletion vector, as
 *                                                  Paimon Spark's DELETE does
 *
 * Values are rendered stably: integers and floats as JSON numbers (NaN/Infinity as strings),
 * DECIMAL as its plain string, DATE as yyyy-MM-dd, TIME as HH:mm:ss.SSS, TIMESTAMP as
 * yyyy-MM-ddTHH:mm:ss.SSSSSS (micros, no zone), BINARY as lowercase hex, NULL as null. `write`
 * takes BINARY/VARBINARY as lowercase hex too.
 */

import java.io.BufferedReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.InnerTableScan;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.table.source.snapshot.SnapshotReader;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.source.DeletionFile;
import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import org.apache.paimon.deletionvectors.DeletionVector;
import org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer;
import org.apache.paimon.index.IndexFileHandler;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.IndexIncrement;
import org.apache.paimon.manifest.FileKind;
import org.apache.paimon.manifest.IndexManifestEntry;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.table.sink.RowPartitionKeyExtractor;

public class PaimonPeer {

    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("serve")) {
            serve(args[1]);
            return;
        }
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        try {
            command(args, out);
        } catch (UsageError e) {
            out.flush();
            System.err.println(e.getMessage());
            System.exit(2);
        }
        out.flush();
    }

    private static final String BATCH_END = "BATCH_END";

    /** One command line (batch included): what both the one-shot and the serve mode run. */
    private static void command(String[] args, PrintStream out) throws Exception {
        if (args.length == 2 && args[0].equals("batch")) {
            // one JVM for many commands: each line of the file is a JSON array of arguments;
            // every command's output ends with a line BATCH_END
            for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
                if (line.trim().isEmpty()) {
                    continue;
                }
                execute(arguments(line), out);
                out.println(BATCH_END);
            }
        } else {
            execute(args, out);
        }
    }

    private static String[] arguments(String jsonArray) throws Exception {
        List<String> commandArgs = new ArrayList<>();
        JSON.readTree(jsonArray).forEach(a -> commandArgs.add(a.asText()));
        return commandArgs.toArray(new String[0]);
    }

    /**
     * The long-lived peer of tests/interop/conftest.py: each line of standard input is one
     * command (a JSON array of arguments), run by {@link #command} exactly as the one-shot mode
     * runs it. Each command opens (and closes) its own catalog, so it sees every file written
     * since the last one: Paimon 1.0's caches of tables, snapshots and manifests (CachingCatalog,
     * its SegmentsCache) belong to that catalog, LocalFileIO caches nothing, and the JVM-wide
     * ones hold no table state (code generation's compiled classes keyed by row type, the Hive
     * catalog's metastore client pool). Each result is one frame on standard output:
     *
     * <pre>@@PaimonPeer &lt;token&gt; ok|error &lt;n&gt;\n&lt;n bytes of UTF-8&gt;</pre>
     *
     * "ok": the command's standard output; "error": what the one-shot mode would have printed
     * to standard error (the uncaught exception's trace, or the usage text), and the peer goes
     * on with the next line. Frames go to the real standard output; System.out is standard
     * error meanwhile, so nothing Paimon, Hadoop or a logger prints there can tear a frame (and
     * the caller skips any line that is not a frame header with its token). End of input (the
     * caller closed the pipe, or died) ends the JVM.
     */
    private static void serve(String token) throws Exception {
        PrintStream frames = new PrintStream(
                new java.io.BufferedOutputStream(new java.io.FileOutputStream(java.io.FileDescriptor.out)),
                false, "UTF-8");
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(
                new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) {
                continue;
            }
            java.io.ByteArrayOutputStream output = new java.io.ByteArrayOutputStream();
            String status;
            byte[] payload;
            Throwable failure = null;
            try (PrintStream out = new PrintStream(output, false, "UTF-8")) {
                command(arguments(line), out);
                out.flush();
                status = "ok";
                payload = output.toByteArray();
            } catch (UsageError e) {
                status = "error";
                payload = (e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
            } catch (Throwable t) {
                status = "error";
                failure = t;
                // what the JVM's default handler prints for the one-shot mode's uncaught exception
                java.io.StringWriter trace = new java.io.StringWriter();
                t.printStackTrace(new java.io.PrintWriter(trace));
                payload = ("Exception in thread \"main\" " + trace).getBytes(StandardCharsets.UTF_8);
            }
            frames.print("@@PaimonPeer " + token + " " + status + " " + payload.length + "\n");
            frames.write(payload);
            frames.flush();
            if (failure instanceof VirtualMachineError) {
                System.exit(3);  // an OutOfMemoryError...: the next command gets a fresh JVM
            }
        }
        System.exit(0);  // whatever threads Paimon left behind
    }

    /** A malformed command: the usage text (the one-shot mode prints it and exits 2). */
    private static final class UsageError extends RuntimeException {
        UsageError(String usage) {
            super(usage);
        }
    }

    private static void execute(String[] args, PrintStream out) throws Exception {
        if (args.length < 3) {
            usage();
        }
        String command = args[0];
        if (command.equals("sketch")) {
            out.println(hex(sketch(args[1], args[2])));
            return;
        }
        if (command.equals("union")) {
            out.println(hex(union(args[1], java.util.Arrays.copyOfRange(args, 2, args.length))));
            return;
        }
        try (Catalog catalog = openCatalog(args[1])) {
            if (command.equals("create")) {
                if (args.length < 4) {
                    usage();
                }
                create(catalog, Identifier.fromString(args[2]), args[3]);
                return;
            }
            if (command.equals("tables")) {
                // the catalog's tables of one database, by name (what other engines find)
                for (String name : catalog.listTables(args[2])) {
                    out.println(name);
                }
                return;
            }
            if (command.equals("system")) {
                if (args.length < 4) {
                    usage();
                }
                system(catalog, args[2], args[3], out);
                return;
            }
            Table table = catalog.getTable(Identifier.fromString(args[2]));
            switch (command) {
                case "read":
                    if (args.length > 3) {
                        table = table.copy(Collections.singletonMap("scan.snapshot-id", args[3]));
                    }
                    read(table, out, false);
                    break;
                case "bucket":
                    read(table, out, true);
                    break;
                case "readtag":
                    read(table.copy(Collections.singletonMap("scan.tag-name", args[3])), out,
                            false);
                    break;
                case "readopts":
                    // a batch read with dynamic options (key=value ...), rows with their kind:
                    // e.g. incremental-between=t1,t2
                    Map<String, String> dynamic = new HashMap<>();
                    for (int i = 3; i < args.length; i++) {
                        int eq = args[i].indexOf('=');
                        dynamic.put(args[i].substring(0, eq), args[i].substring(eq + 1));
                    }
                    read(table.copy(dynamic), out, false, true);
                    break;
                case "tag":
                    table.createTag(args[3], Long.parseLong(args[4]));
                    break;
                case "tags":
                    for (Map.Entry<org.apache.paimon.Snapshot, List<String>> e :
                            ((FileStoreTable) table).tagManager().tags().entrySet()) {
                        for (String name : e.getValue()) {
                            out.println(name + " " + e.getKey().id());
                        }
                    }
                    break;
                case "branch":
                    if (args.length > 4) {
                        table.createBranch(args[3], args[4]);
                    } else {
                        table.createBranch(args[3]);
                    }
                    break;
                case "rollback":
                    if (args[3].chars().allMatch(Character::isDigit)) {
                        table.rollbackTo(Long.parseLong(args[3]));
                    } else {
                        table.rollbackTo(args[3]);
                    }
                    break;
                case "write":
                    if (args.length < 4) {
                        usage();
                    }
                    write(table, args[3]);
                    break;
                case "compact":
                    compact(table);
                    break;
                case "dvdelete":
                    if (args.length < 5) {
                        usage();
                    }
                    Set<Long> values = new LinkedHashSet<>();
                    for (int i = 4; i < args.length; i++) {
                        values.add(Long.parseLong(args[i]));
                    }
                    dvDelete((FileStoreTable) table, args[3], values);
                    break;
                case "stream":
                    if (args.length < 5) {
                        usage();
                    }
                    stream(table, out, Long.parseLong(args[3]), Long.parseLong(args[4]));
                    break;
                default:
                    usage();
            }
        }
    }

    private static void usage() {
        throw new UsageError("usage: PaimonPeer read <warehouse> <db.table> [snapshotId]\n"
                + "       PaimonPeer bucket <warehouse> <db.table>\n"
                + "       PaimonPeer readtag <warehouse> <db.table> <tag>\n"
                + "       PaimonPeer readopts <warehouse> <db.table> <key=value>...\n"
                + "       PaimonPeer tag <warehouse> <db.table> <tag> <snapshotId>\n"
                + "       PaimonPeer tags <warehouse> <db.table>\n"
                + "       PaimonPeer rollback <warehouse> <db.table> <snapshotId|tag>\n"
                + "       PaimonPeer branch <warehouse> <db.table> <branch> [tag]\n"
                + "       PaimonPeer write <warehouse> <db.table> <jsonl file>\n"
                + "       PaimonPeer compact <warehouse> <db.table>\n"
                + "       PaimonPeer stream <warehouse> <db.table> <from> <to>\n"
                + "       PaimonPeer create <warehouse> <db.table> <json spec>\n"
                + "       (<warehouse>: a path or URI, or a JSON object of catalog options)\n"
                + "       PaimonPeer sketch hll|theta|rbm32|rbm64 <v,v,...>\n"
                + "       PaimonPeer union hll|theta|rbm32|rbm64 <hex>...\n"
                + "       PaimonPeer system <warehouse> <db.table> <name>\n"
                + "       PaimonPeer dvdelete <warehouse> <db.table> <column> <value>...\n"
                + "       PaimonPeer batch <file>\n"
                + "       PaimonPeer serve <token>");
    }

    /**
     * A warehouse path or URI opens Paimon's filesystem catalog on it; a JSON object opens the
     * catalog those options name, e.g. {"metastore": "jdbc", "uri": "jdbc:sqlite:/x/c.db",
     * "warehouse": "/x/wh", "lock.enabled": "true"} (the JDBC driver on the class path).
     */
    private static Catalog openCatalog(String warehouse) throws Exception {
        Options options = new Options();
        if (warehouse.startsWith("{")) {
            JSON.readTree(warehouse).fields().forEachRemaining(
                    e -> options.set(e.getKey(), e.getValue().asText()));
            String path = options.get("warehouse");
            if (path != null && !path.contains(":")) {
                options.set("warehouse", "file:" + Paths.get(path).toAbsolutePath());
            }
            return CatalogFactory.createCatalog(CatalogContext.create(options));
        }
        String uri = warehouse.contains(":") ? warehouse : "file:" + Paths.get(warehouse).toAbsolutePath();
        options.set("warehouse", uri);
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    // ------------------------------------------------------------------ read

    private static void read(Table table, PrintStream out, boolean withBucket) throws Exception {
        read(table, out, withBucket, false);
    }

    /** What a streaming consumer reads from snapshot ``from`` through ``to``, in order. */
    private static void stream(Table table, PrintStream out, long from, long to) throws Exception {
        Map<String, String> start = new HashMap<>();
        start.put("scan.mode", "from-snapshot");
        start.put("scan.snapshot-id", Long.toString(from));
        ReadBuilder builder = table.copy(start).newReadBuilder();
        StreamTableScan scan = builder.newStreamScan();
        for (int guard = 0; guard < 10_000; guard++) {
            Long next = scan.checkpoint();
            if (next != null && next > to) {
                break;
            }
            TableScan.Plan plan = scan.plan();
            if (plan instanceof SnapshotReader.Plan
                    && ((SnapshotReader.Plan) plan).snapshotId() != null
                    && ((SnapshotReader.Plan) plan).snapshotId() > to) {
                break;
            }
            emit(table, builder, plan.splits(), out, false, true);
        }
    }

    /** The system table ``<db.table>$<name>``: its fields, then its rows (the catalog loads it
     * through SystemTableLoader, as Paimon's engines do for ``SELECT * FROM `t$name```). */
    private static void system(Catalog catalog, String table, String name, PrintStream out)
            throws Exception {
        Identifier data = Identifier.fromString(table);
        Table system = catalog.getTable(
                new Identifier(data.getDatabaseName(), data.getObjectName() + "$" + name));
        StringBuilder fields = new StringBuilder("{\"_fields\": [");
        List<DataField> all = system.rowType().getFields();
        for (int i = 0; i < all.size(); i++) {
            fields.append(i > 0 ? ", " : "").append('[').append(quote(all.get(i).name()))
                    .append(", ").append(quote(all.get(i).type().toString())).append(']');
        }
        out.println(fields.append("]}"));
        read(system, out, false, false);
    }

    private static void read(Table table, PrintStream out, boolean withBucket, boolean withRowKind)
            throws Exception {
        ReadBuilder builder = table.newReadBuilder();
        emit(table, builder, builder.newScan().plan().splits(), out, withBucket, withRowKind);
    }

    private static void emit(Table table, ReadBuilder builder, List<Split> splits, PrintStream out,
                             boolean withBucket, boolean withRowKind) throws Exception {
        RowType rowType = table.rowType();
        List<DataField> fields = rowType.getFields();
        InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
        }
        for (Split split : splits) {
            final int bucket = split instanceof DataSplit ? ((DataSplit) split).bucket() : -1;
            try (RecordReader<InternalRow> reader = builder.newRead().createReader(split)) {
                reader.forEachRemaining(row -> {
                    StringBuilder line = new StringBuilder("{");
                    for (int i = 0; i < getters.length; i++) {
                        if (i > 0) {
                            line.append(", ");
                        }
                        line.append(quote(fields.get(i).name())).append(": ");
                        line.append(render(getters[i].getFieldOrNull(row), fields.get(i).type()));
                    }
                    if (withBucket) {
                        line.append(", \"_bucket\": ").append(bucket);
                    }
                    if (withRowKind) {
                        line.append(", \"_row_kind\": ").append(quote(row.getRowKind().shortString()));
                    }
                    out.println(line.append('}'));
                });
            }
        }
    }

    private static String render(Object value, DataType type) {
        if (value == null) {
            return "null";
        }
        switch (type.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return quote(value.toString());
            case BOOLEAN:
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
                return value.toString();
            case FLOAT:
            case DOUBLE: {
                double d = ((Number) value).doubleValue();
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    return quote(Double.toString(d));
                }
                return type.getTypeRoot().name().equals("FLOAT")
                        ? Float.toString((Float) value) : Double.toString(d);
            }
            case DECIMAL:
                return quote(((Decimal) value).toBigDecimal().toPlainString());
            case DATE:
                return quote(LocalDate.ofEpochDay((Integer) value).toString());
            case TIME_WITHOUT_TIME_ZONE:
                return quote(LocalTime.ofNanoOfDay(((Integer) value) * 1_000_000L).format(TIME));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return quote(((Timestamp) value).toLocalDateTime().format(TS));
            case BINARY:
            case VARBINARY:
                return quote(hex((byte[]) value));
            default:
                return quote(value.toString());
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder hex = new StringBuilder();
        for (byte b : bytes) {
            hex.append(String.format("%02x", b & 0xff));
        }
        return hex.toString();
    }

    private static byte[] sketch(String kind, String csv) throws Exception {
        List<Long> values = new ArrayList<>();
        for (String v : csv.split(",")) {
            if (!v.trim().isEmpty()) {
                values.add(Long.parseLong(v.trim()));
            }
        }
        int[] ints = new int[values.size()];
        long[] longs = new long[values.size()];
        for (int i = 0; i < ints.length; i++) {
            ints[i] = (int) (long) values.get(i);
            longs[i] = values.get(i);
        }
        switch (kind) {
            case "hll":
                return org.apache.paimon.utils.HllSketchUtil.sketchOf(ints);
            case "theta":
                return org.apache.paimon.utils.ThetaSketch.sketchOf(ints);
            case "rbm32":
                return org.apache.paimon.utils.RoaringBitmap32.bitmapOf(ints).serialize();
            case "rbm64":
                return org.apache.paimon.utils.RoaringBitmap64.bitmapOf(longs).serialize();
            default:
                throw new IllegalArgumentException("PaimonPeer sketch: unknown kind " + kind);
        }
    }

    private static byte[] union(String kind, String[] inputs) {
        org.apache.paimon.types.VarBinaryType type = new org.apache.paimon.types.VarBinaryType();
        org.apache.paimon.mergetree.compact.aggregate.FieldAggregator agg;
        switch (kind) {
            case "hll":
                agg = new org.apache.paimon.mergetree.compact.aggregate.FieldHllSketchAgg(type);
                break;
            case "theta":
                agg = new org.apache.paimon.mergetree.compact.aggregate.FieldThetaSketchAgg(type);
                break;
            case "rbm32":
                agg = new org.apache.paimon.mergetree.compact.aggregate.FieldRoaringBitmap32Agg(type);
                break;
            case "rbm64":
                agg = new org.apache.paimon.mergetree.compact.aggregate.FieldRoaringBitmap64Agg(type);
                break;
            default:
                throw new IllegalArgumentException("PaimonPeer union: unknown kind " + kind);
        }
        Object acc = null;
        for (String input : inputs) {
            acc = agg.agg(acc, unhex(input));
        }
        return (byte[]) acc;
    }

    private static byte[] unhex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    // ------------------------------------------------------------------ write

    private static void write(Table table, String jsonl) throws Exception {
        RowType rowType = table.rowType();
        List<DataField> fields = rowType.getFields();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        // dynamic-bucket tables: Paimon's own assigner picks each key's bucket (as Flink's
        // HashBucketAssignerOperator); the writer maintains the HASH index
        HashBucketAssigner assigner = null;
        RowPartitionKeyExtractor extractor = null;
        if (table instanceof FileStoreTable
                && ((FileStoreTable) table).bucketMode() == BucketMode.HASH_DYNAMIC) {
            FileStoreTable store = (FileStoreTable) table;
            assigner = new HashBucketAssigner(store.snapshotManager(), "paimon-peer",
                    store.store().newIndexFileHandler(), 1, 1, 0,
                    store.coreOptions().dynamicBucketTargetRowNum());
            extractor = new RowPartitionKeyExtractor(store.schema());
        }
        // cross-partition tables (primary key without every partition key): Paimon's
        // GlobalIndexAssigner needs RocksDB, which this jar lacks; for NEW keys it assigns what
        // its crosspartition.BucketAssigner does with one assigner, done here the same way.
        // Such tables keep no HASH index.
        org.apache.paimon.crosspartition.BucketAssigner crossBuckets = null;
        Set<BinaryRow> crossKeys = null;
        if (table instanceof FileStoreTable
                && ((FileStoreTable) table).bucketMode() == BucketMode.CROSS_PARTITION) {
            FileStoreTable store = (FileStoreTable) table;
            if (store.snapshotManager().latestSnapshotId() != null) {
                throw new UnsupportedOperationException(
                        "PaimonPeer writes a cross-partition table only while it is empty");
            }
            crossBuckets = new org.apache.paimon.crosspartition.BucketAssigner();
            crossKeys = new java.util.HashSet<>();
            extractor = new RowPartitionKeyExtractor(store.schema());
        }
        // the IOManager (its spill folder paimon-io-<uuid> in java.io.tmpdir) closes last
        try (IOManager ioManager = IOManager.create(System.getProperty("java.io.tmpdir"));
             BatchTableWrite write = builder.newWrite();
             BatchTableCommit commit = builder.newCommit();
             BufferedReader in = Files.newBufferedReader(Paths.get(jsonl), StandardCharsets.UTF_8)) {
            write.withIOManager(ioManager);
            String text;
            while ((text = in.readLine()) != null) {
                if (text.trim().isEmpty()) {
                    continue;
                }
                JsonNode node = JSON.readTree(text);
                JsonNode kind = node.get("_row_kind");
                RowKind rowKind = kind == null || kind.isNull()
                        ? RowKind.INSERT : RowKind.fromShortString(kind.asText());
                GenericRow row = new GenericRow(rowKind, fields.size());
                for (int i = 0; i < fields.size(); i++) {
                    row.setField(i, parse(node.get(fields.get(i).name()), fields.get(i).type()));
                }
                if (assigner != null) {
                    write.write(row, assigner.assign(extractor.partition(row),
                            extractor.trimmedPrimaryKey(row).hashCode()));
                } else if (crossBuckets != null) {
                    if (!crossKeys.add(extractor.trimmedPrimaryKey(row).copy())) {
                        throw new UnsupportedOperationException(
                                "PaimonPeer writes each key of a cross-partition table once");
                    }
                    write.write(row, crossBuckets.assignBucket(extractor.partition(row),
                            bucket -> true,
                            (int) ((FileStoreTable) table).coreOptions()
                                    .dynamicBucketTargetRowNum()));
                } else {
                    write.write(row);
                }
            }
            commit.commit(write.prepareCommit());
        }
    }

    private static Object parse(JsonNode node, DataType type) {
        if (node == null || node.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(node.asText());
            case BOOLEAN:
                return node.asBoolean();
            case TINYINT:
                return (byte) node.asInt();
            case SMALLINT:
                return (short) node.asInt();
            case INTEGER:
                return node.asInt();
            case BIGINT:
                return node.asLong();
            case FLOAT:
                return (float) node.asDouble();
            case DOUBLE:
                return node.isTextual() ? Double.parseDouble(node.asText()) : node.asDouble();
            case DECIMAL: {
                DecimalType dt = (DecimalType) type;
                return Decimal.fromBigDecimal(new BigDecimal(node.asText()), dt.getPrecision(), dt.getScale());
            }
            case DATE:
                return (int) LocalDate.parse(node.asText()).toEpochDay();
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return Timestamp.fromLocalDateTime(LocalDateTime.parse(node.asText()));
            case BINARY:
            case VARBINARY:
                return unhex(node.asText());
            default:
                throw new IllegalArgumentException("PaimonPeer write: unsupported type " + type);
        }
    }

    // ------------------------------------------------------------------ compact

    private static void compact(Table table) throws Exception {
        // every (partition, bucket) holding files in the latest snapshot, level 0 included: a
        // batch scan of a first-row table skips level 0 (AbstractBatchTableScan), which would
        // leave a table holding only level-0 files with nothing to compact
        Map<BinaryRow, Set<Integer>> targets = new LinkedHashMap<>();
        InnerTableScan scan = (InnerTableScan) table.newReadBuilder().newScan();
        for (Split split : scan.withLevelFilter(level -> true).plan().splits()) {
            DataSplit data = (DataSplit) split;
            targets.computeIfAbsent(data.partition(), p -> new LinkedHashSet<>()).add(data.bucket());
        }
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (IOManager ioManager = IOManager.create(System.getProperty("java.io.tmpdir"));
             BatchTableWrite write = builder.newWrite();
             BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager);
            for (Map.Entry<BinaryRow, Set<Integer>> entry : targets.entrySet()) {
                for (int bucket : entry.getValue()) {
                    write.compact(entry.getKey(), bucket, true);
                }
            }
            commit.commit(write.prepareCommit());
        }
    }

    // ------------------------------------------------------------------ create

    private static void create(Catalog catalog, Identifier identifier, String spec)
            throws Exception {
        JsonNode node = JSON.readTree(spec);
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode field : node.get("fields")) {
            schema.column(field.get(0).asText(),
                    DataTypeJsonParser.parseAtomicTypeSQLString(field.get(1).asText()));
        }
        List<String> keys = new ArrayList<>();
        node.path("primaryKeys").forEach(k -> keys.add(k.asText()));
        if (!keys.isEmpty()) {
            schema.primaryKey(keys);
        }
        List<String> partitions = new ArrayList<>();
        node.path("partitionKeys").forEach(k -> partitions.add(k.asText()));
        schema.partitionKeys(partitions);
        Iterator<Map.Entry<String, JsonNode>> options = node.path("options").fields();
        while (options.hasNext()) {
            Map.Entry<String, JsonNode> option = options.next();
            schema.option(option.getKey(), option.getValue().asText());
        }
        catalog.createDatabase(identifier.getDatabaseName(), true);
        catalog.createTable(identifier, schema.build(), false);
    }

    // ------------------------------------------------------------------ dvdelete

    private static void dvDelete(FileStoreTable table, String column, Set<Long> values)
            throws Exception {
        Long snapshotId = table.snapshotManager().latestSnapshotId();
        int index = table.rowType().getFieldNames().indexOf(column);
        InternalRow.FieldGetter getter =
                InternalRow.createFieldGetter(table.rowType().getTypeAt(index), index);
        ReadBuilder builder = table.newReadBuilder();
        IndexFileHandler handler = table.store().newIndexFileHandler();
        boolean unaware = table.bucketMode() == BucketMode.BUCKET_UNAWARE;
        Map<String, AppendDeletionFileMaintainer> maintainers = new LinkedHashMap<>();
        for (Split split : builder.newScan().plan().splits()) {
            DataSplit data = (DataSplit) split;
            List<DeletionFile> deletionFiles = data.deletionFiles().orElse(null);
            for (int f = 0; f < data.dataFiles().size(); f++) {
                DataFileMeta file = data.dataFiles().get(f);
                // the file alone, without its deletion vector: positions count every row
                DataSplit single = DataSplit.builder()
                        .withSnapshot(data.snapshotId())
                        .withPartition(data.partition())
                        .withBucket(data.bucket())
                        .withBucketPath(data.bucketPath())
                        .withDataFiles(Collections.singletonList(file))
                        .rawConvertible(true)
                        .build();
                BitmapDeletionVector vector = new BitmapDeletionVector();
                long[] position = {0};
                try (RecordReader<InternalRow> reader = builder.newRead().createReader(single)) {
                    reader.forEachRemaining(row -> {
                        Object value = getter.getFieldOrNull(row);
                        if (value != null && values.contains(((Number) value).longValue())) {
                            vector.delete(position[0]);
                        }
                        position[0]++;
                    });
                }
                if (vector.isEmpty()) {
                    continue;
                }
                DeletionFile old = deletionFiles == null ? null : deletionFiles.get(f);
                if (old != null) {
                    vector.merge(DeletionVector.read(table.fileIO(), old));
                }
                String key = data.partition().toString() + "/" + data.bucket();
                AppendDeletionFileMaintainer maintainer = maintainers.get(key);
                if (maintainer == null) {
                    maintainer = unaware
                            ? AppendDeletionFileMaintainer.forUnawareAppend(
                                    handler, snapshotId, data.partition())
                            : AppendDeletionFileMaintainer.forBucketedAppend(
                                    handler, snapshotId, data.partition(), data.bucket());
                    maintainers.put(key, maintainer);
                }
                maintainer.notifyNewDeletionVector(file.fileName(), vector);
            }
        }
        List<CommitMessage> messages = new ArrayList<>();
        for (AppendDeletionFileMaintainer maintainer : maintainers.values()) {
            List<IndexFileMeta> added = new ArrayList<>();
            List<IndexFileMeta> deleted = new ArrayList<>();
            for (IndexManifestEntry entry : maintainer.persist()) {
                (entry.kind() == FileKind.ADD ? added : deleted).add(entry.indexFile());
            }
            messages.add(new CommitMessageImpl(maintainer.getPartition(), maintainer.getBucket(),
                    DataIncrement.emptyIncrement(), CompactIncrement.emptyIncrement(),
                    new IndexIncrement(added, deleted)));
        }
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
    }
}
