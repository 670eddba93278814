"""Binding a query to the warehouse: table names to pinned Delta snapshots (temporary views over one committed
version), catalog views expanded, file reads and table functions (`read_files`, `event_log`, information_schema)
resolved, each through the guards the policy hands in."""
