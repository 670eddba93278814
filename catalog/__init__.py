"""The persistent catalog (SQLAlchemy; SQLite in the warehouse by default). Filled in with the Delta warehouse."""
