package sluicegate.engine;

/**
 * The answer format the gateway's Java helpers share (PlanWalker.java, CatalogListing.java): lines of tab-separated
 * fields, with backslash, tab, CR and LF escaped in each field. engine/jvm_objects.py `escaped_lines` reads it.
 * Compiled first, its class loader is the parent of every helper's (`compiled_java`).
 */
public final class Fields {
    private Fields() {
    }

    /** `value` appended to `out` as one field. */
    public static void append(StringBuilder out, String value) {
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
}
