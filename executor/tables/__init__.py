"""Tables (and catalog views): CREATE / ALTER / DROP, INSERT / UPDATE / DELETE, MERGE, VACUUM and OPTIMIZE, each a Delta
transaction through storage/delta."""
