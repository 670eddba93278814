"""The Delta warehouse: statements over catalog tables, each read pinned to one committed snapshot."""
