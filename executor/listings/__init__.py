"""Read models over the catalog: DESCRIBE (text and JSON), information_schema, the event log table function, and the
catalog view that the metadata RPCs (GetTables, GetColumns ...) answer from."""
