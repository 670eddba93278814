package sluicegate.engine;

import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.LocalTempView$;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.command.CreateViewCommand;
import org.apache.spark.sql.execution.command.CreateViewCommand$;

/**
 * A temporary view registered the way `Dataset.createOrReplaceTempView` registers it, for the views the gateway names
 * itself (engine/sessions.py `replace_temporary_view`), compiled in the driver by Janino.
 *
 * It builds the same CreateViewCommand (Spark 4.1's `Dataset.createTempView`: no columns, comment or properties; the
 * frame's analysed plan; replace; local) and runs it in the frame's session, so the view is checked, stored and
 * replaced as Spark does it. What it leaves out is the command's trip through a QueryExecution as a DataFrame: an
 * analysis of an already analysed plan, a physical plan, an SQL execution id and its listener events. That trip was
 * 5.8 ms of a view's 6 (the gateway registers one view per table a query reads); this takes 0.35 ms.
 */
public final class TemporaryViews {
    public static void replace(Dataset frame, String name) {
        SparkSession session = frame.sparkSession();
        CreateViewCommand command = new CreateViewCommand(
            TableIdentifier.apply(name),
            (scala.collection.immutable.Seq) scala.collection.immutable.Nil$.MODULE$,
            (scala.Option) scala.None$.MODULE$,
            (scala.Option) scala.None$.MODULE$,
            (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$.empty(),
            (scala.Option) scala.None$.MODULE$,
            frame.logicalPlan(),
            false,
            true,
            LocalTempView$.MODULE$,
            CreateViewCommand$.MODULE$.apply$default$11(),
            true,
            CreateViewCommand$.MODULE$.apply$default$13());
        // the command reads the session's settings (case sensitivity, view limits) through the active session
        scala.Option previous = org.apache.spark.sql.SparkSession.getActiveSession();
        org.apache.spark.sql.SparkSession.setActiveSession(session);
        try {
            command.run(session);
        } finally {
            if (previous.isDefined()) {
                org.apache.spark.sql.SparkSession.setActiveSession((org.apache.spark.sql.SparkSession) previous.get());
            } else {
                org.apache.spark.sql.SparkSession.clearActiveSession();
            }
        }
    }
}
