/*
 * An independent Paimon reader/writer for dbt-paimon's interop tests, running on Apache Paimon
 * 1.0 Java (the jar bundled in the PyPI package paimon-python-ali==0.1.1; see
 * tests/interop/conftest.py, which downloads it and compiles this file with javac).
 *
 *   read    <warehouse> <db.table> [snapshotId]   every row of the (merged) batch read, one JSON line each
 *   bucket  <warehouse> <db.table>                 the same rows with "_bucket": the bucket of the split read
 *   write   <warehouse> <db.table> <jsonl file>    one commit of the file's rows; "_row_kind" (+I/-U/+U/-D) per row
 *   compact <warehouse> <db.table>                 Paimon's own full compaction of every (partition, bucket)
 *   stream  <warehouse> <db.table> <from> <to>     a streaming read (scan.mode from-snapshot) of
 *                                                  snapshots from..to, each row with "_row_kind"
 *
 * Values are rendered stably: integers and floats as JSON numbers (NaN/Infinity as strings),
 * DECIMAL as its plain string, DATE as yyyy-MM-dd, TIME as HH:mm:ss.SSS, TIMESTAMP as
 * yyyy-MM-ddTHH:mm:ss.SSSSSS (micros, no zone), BINARY as lowercase hex, NULL as null.
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

public class PaimonPeer {

    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            usage();
        }
        String command = args[0];
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        try (Catalog catalog = openCatalog(args[1])) {
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
                case "write":
                    if (args.length < 4) {
                        usage();
                    }
                    write(table, args[3]);
                    break;
                case "compact":
                    compact(table);
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
        out.flush();
    }

    private static void usage() {
        System.err.println("usage: PaimonPeer read <warehouse> <db.table> [snapshotId]\n"
                + "       PaimonPeer bucket <warehouse> <db.table>\n"
                + "       PaimonPeer write <warehouse> <db.table> <jsonl file>\n"
                + "       PaimonPeer compact <warehouse> <db.table>\n"
                + "       PaimonPeer stream <warehouse> <db.table> <from> <to>");
        System.exit(2);
    }

    private static Catalog openCatalog(String warehouse) {
        String uri = warehouse.contains(":") ? warehouse : "file:" + Paths.get(warehouse).toAbsolutePath();
        Options options = new Options();
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
            case VARBINARY: {
                StringBuilder hex = new StringBuilder();
                for (byte b : (byte[]) value) {
                    hex.append(String.format("%02x", b & 0xff));
                }
                return quote(hex.toString());
            }
            default:
                return quote(value.toString());
        }
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
        try (BatchTableWrite write = builder.newWrite();
             BatchTableCommit commit = builder.newCommit();
             BufferedReader in = Files.newBufferedReader(Paths.get(jsonl), StandardCharsets.UTF_8)) {
            write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
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
                write.write(row);
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
        try (BatchTableWrite write = builder.newWrite();
             BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
            for (Map.Entry<BinaryRow, Set<Integer>> entry : targets.entrySet()) {
                for (int bucket : entry.getValue()) {
                    write.compact(entry.getKey(), bucket, true);
                }
            }
            commit.commit(write.prepareCommit());
        }
    }
}
