package sluicegate.engine;

import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;

/**
 * What the metadata RPCs need of Spark's session catalog in one py4j call (engine/session_catalog.py),
 * compiled in the driver by Janino.
 *
 * A listing asked Spark's catalog objects through py4j: three calls per Scala list (the list, its length, its
 * elements joined) and one or two per table, about nine round trips for one GetTables. Under load each round trip
 * waits for a JVM thread behind Spark's tasks, so a listing took 1.5-5x a DESCRIBE, which makes none. Here the
 * answer is one string: lines of tab-separated fields, backslash, tab, CR and LF escaped in each field.
 */
public final class CatalogListing {
    /**
     * Everything a listing needs of Spark in one answer: a first line with the number D of Spark's databases and
     * the number V of the session's temporary views (not global ones); the D databases, a line each; the V views, a
     * line each; then per table of every database a line of database, name, Spark's table type (MANAGED, EXTERNAL,
     * VIEW) and comment ("\u0000" for none). Spark's catalog here is in memory (one per gateway process): reading
     * it whole costs microseconds a table, where a second py4j round trip under load costs milliseconds.
     */
    public static String listing(SessionCatalog session) {
        ExternalCatalog external = session.externalCatalog();
        scala.collection.immutable.Seq databases = external.listDatabases();
        scala.collection.immutable.Seq views = session.getTempViewNames();
        StringBuilder out = new StringBuilder().append(databases.length()).append('\t').append(views.length());
        scala.collection.Iterator names = databases.iterator();
        while (names.hasNext()) {
            out.append('\n');
            Fields.append(out, (String) names.next());
        }
        names = views.iterator();
        while (names.hasNext()) {
            out.append('\n');
            Fields.append(out, (String) names.next());
        }
        names = databases.iterator();
        while (names.hasNext()) {
            tables(external, (String) names.next(), out);
        }
        return out.toString();
    }

    /** The lines of `database`'s tables; a database or table dropped meanwhile is left out. */
    private static void tables(ExternalCatalog external, String database, StringBuilder out) {
        scala.collection.Iterator tables;
        try {
            tables = external.listTables(database).iterator();
        } catch (Exception gone) {
            if (external.databaseExists(database)) {
                throw new IllegalStateException("could not list the tables of " + database, gone);
            }
            return;
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
            out.append('\n');
            Fields.append(out, database);
            out.append('\t');
            Fields.append(out, name);
            out.append('\t');
            Fields.append(out, table.tableType().name());
            out.append('\t');
            Fields.append(out, table.comment().isDefined() ? (String) table.comment().get() : "\u0000");
        }
    }
}
