"""Materialized views: their statements, full and incremental refresh, background (async) refreshes and the scheduler
of their SCHEDULE clauses."""
