package sluicegate.engine;

import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;

/**
 * What the metadata RPCs need of Spark's session catalog, one py4j call per question (engine/session_catalog.py),
 * compiled in the driver by Janino.
 *
 * A listing asked Spark's catalog objects through py4j: three calls per Scala list (the list, its length, its
 * elements joined) and one or two per table, about nine round trips for one GetTables. Under load each round trip
 * waits for a JVM thread behind Spark's tasks, so a listing took 1.5-5x a DESCRIBE, which makes none. Here each
 * answer is one string: lines of tab-separated fields, backslash, tab, CR and LF escaped in each field.
 */
public final class CatalogListing {
    /** A first line with the number N of Spark's databases, then the N databases, a line each, then the session's
     * temporary views (not global ones), a line each. */
    public static String databasesAndViews(SessionCatalog session) {
        scala.collection.immutable.Seq names = session.externalCatalog().listDatabases();
        StringBuilder out = new StringBuilder().append(names.length());
        scala.collection.Iterator databases = names.iterator();
        while (databases.hasNext()) {
            out.append('\n');
            field(out, (String) databases.next());
        }
        scala.collection.Iterator views = session.getTempViewNames().iterator();
        while (views.hasNext()) {
            out.append('\n');
            field(out, (String) views.next());
        }
        return out.toString();
    }

    /**
     * The tables and views of each database named in `databases` (tab-separated, escaped as the answer): per table
     * a line of database, name, Spark's table type (MANAGED, EXTERNAL, VIEW) and comment ("\u0000" for none). A
     * database or table dropped meanwhile is left out.
     */
    public static String tables(SessionCatalog session, String databases) {
        ExternalCatalog external = session.externalCatalog();
        StringBuilder out = new StringBuilder();
        String[] names = databases.isEmpty() ? new String[0] : databases.split("\t", -1);
        for (int d = 0; d < names.length; d++) {
            String database = unescape(names[d]);
            scala.collection.Iterator tables;
            try {
                tables = external.listTables(database).iterator();
            } catch (Exception gone) {
                if (external.databaseExists(database)) {
                    throw new IllegalStateException("could not list the tables of " + database, gone);
                }
                continue;
            }
            while (tables.hasNext()) {
                String name = (String) tables.next();
                CatalogTable table;
                try {
                    table = external.getTable(database, name);
                } catch (Exception gone) {
                    if (external.tableExists(database, name)) {
                        throw new IllegalStateException("could not read " + database + "." + name, gone);
                    }
                    continue;
                }
                if (out.length() > 0) {
                    out.append('\n');
                }
                field(out, database);
                out.append('\t');
                field(out, name);
                out.append('\t');
                field(out, table.tableType().name());
                out.append('\t');
                field(out, table.comment().isDefined() ? (String) table.comment().get() : "\u0000");
            }
        }
        return out.toString();
    }

    private static void field(StringBuilder out, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\') {
                out.append("\\\\");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else {
                out.append(c);
            }
        }
    }

    private static String unescape(String value) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' && i + 1 < value.length()) {
                char next = value.charAt(++i);
                out.append(next == 't' ? '\t' : next == 'n' ? '\n' : next == 'r' ? '\r' : next);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
