"""`sluicegate shell`: a psql-like client over the HiveServer2 protocol."""
