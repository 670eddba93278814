package sluicegate.policy;

import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;

import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.analysis.UnresolvedTableValuedFunction;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.trees.TreeNode;
import org.apache.spark.sql.execution.datasources.LogicalRelation;

import sluicegate.engine.Fields;

/**
 * Every tree node of a Spark plan, for the gateway's policy (policy/spark_plans.py), in one call from Python.
 *
 * Compiled in the driver by Janino (engine/jvm_objects.compiled_java). It replaces `TreeNode.toJSON`, which asks
 * Scala reflection for every node's field names (45-55 ms for a TPC query's analysed plan, more under load), and
 * it sees more: it follows every node's children and every constructor argument (plans, expressions, subqueries,
 * options, collections, maps, arrays and the case classes around them), where toJSON leaves out what it cannot
 * render, and a plan's inner children (its subqueries) too.
 *
 * The answer is one line per node: its class's full name, then tab-separated details for the nodes the policy
 * reads (a function's name; a catalog relation's database and table), with backslash, tab, CR and LF escaped.
 * The root comes first; the other lines are distinct (a check by class needs each class once, and a VALUES list
 * of thousands of literals must not cross py4j line by line).
 */
public final class PlanWalker {
    private final IdentityHashMap seen = new IdentityHashMap();
    private final LinkedHashSet lines = new LinkedHashSet();
    private String root;

    public static String walk(Object plan) {
        PlanWalker walker = new PlanWalker();
        try {
            walker.visit(plan);
        } catch (StackOverflowError error) {
            throw new IllegalStateException("the plan is nested too deeply to be checked");
        }
        if (walker.root == null) {
            throw new IllegalStateException("not a plan: " + (plan == null ? "null" : plan.getClass().getName()));
        }
        StringBuilder out = new StringBuilder(walker.root);
        Iterator it = walker.lines.iterator();
        while (it.hasNext()) {
            out.append('\n').append((String) it.next());
        }
        return out.toString();
    }

    private void visit(Object value) {
        if (value == null || value instanceof CharSequence || value instanceof Number || value instanceof Boolean
                || value instanceof Character) {
            return;
        }
        if (seen.put(value, Boolean.TRUE) != null) {
            return;
        }
        if (value instanceof TreeNode) {
            String line = describe(value);
            if (root == null) {
                root = line;
            } else {
                lines.add(line);
            }
            // the children toJSON walks, should a node compute them from other fields than its arguments
            visitAll(((TreeNode) value).children().iterator());
            try {
                visitAll(((TreeNode) value).innerChildren().iterator());   // a plan's subqueries: beyond toJSON
            } catch (RuntimeException beyondToJson) {
                // what toJSON reads (children and arguments) is walked either way
            }
        }
        if (value instanceof scala.Option) {
            scala.Option option = (scala.Option) value;
            if (option.isDefined()) {
                visit(option.get());
            }
        } else if (value instanceof scala.collection.Map) {
            visitAll(((scala.collection.Map) value).iterator());  // (key, value) pairs: tuples, visited as products
        } else if (value instanceof scala.collection.Iterable) {
            visitAll(((scala.collection.Iterable) value).iterator());
        } else if (value instanceof java.util.Map) {
            visitAll(((java.util.Map) value).entrySet().iterator());
        } else if (value instanceof java.util.Map.Entry) {
            visit(((java.util.Map.Entry) value).getKey());
            visit(((java.util.Map.Entry) value).getValue());
        } else if (value instanceof java.util.Collection) {
            visitAll(((java.util.Collection) value).iterator());
        } else if (value instanceof Object[]) {
            Object[] items = (Object[]) value;
            for (int i = 0; i < items.length; i++) {
                visit(items[i]);
            }
        } else if (value instanceof scala.Product) {
            visitAll(((scala.Product) value).productIterator());
        }
    }

    private void visitAll(scala.collection.Iterator items) {
        while (items.hasNext()) {
            visit(items.next());
        }
    }

    private void visitAll(Iterator items) {
        while (items.hasNext()) {
            visit(items.next());
        }
    }

    private static String describe(Object node) {
        StringBuilder line = new StringBuilder(node.getClass().getName());
        if (node instanceof UnresolvedFunction) {
            Fields.append(line.append('\t'), (String) ((UnresolvedFunction) node).nameParts().last());
        } else if (node instanceof UnresolvedTableValuedFunction) {
            Fields.append(line.append('\t'), (String) ((UnresolvedTableValuedFunction) node).name().last());
        } else if (node instanceof LogicalRelation) {
            scala.Option table = ((LogicalRelation) node).catalogTable();
            if (table.isDefined()) {
                TableIdentifier identifier = ((CatalogTable) table.get()).identifier();
                scala.Option database = identifier.database();
                Fields.append(line.append('\t'), database.isDefined() ? (String) database.get() : "");
                Fields.append(line.append('\t'), identifier.table());
            }
        }
        return line.toString();
    }
}
