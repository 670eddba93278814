"""Tables (and catalog views): CREATE / ALTER / DROP, INSERT / UPDATE / DELETE, MERGE and VACUUM, each a Delta
transaction through storage/delta."""
