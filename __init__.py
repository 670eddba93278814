"""sluicegate: a SQL-first streaming warehouse gateway (HiveServer2 in front of Spark Structured Streaming and Delta).

The one import root. The layers live in the repository's top-level folders and are installed under this name
(pyproject's package-dir maps `sluicegate` to the repository root), so `gateway/` imports as `sluicegate.gateway`:
no generic top-level name (`catalog`, `engine`, `storage` ...) of this project can clash with another distribution's.
Imports go down the layers only (ARCHITECTURE.md; CI's import contracts):
gateway -> warehouse -> policy -> engine -> storage -> catalog -> dialect.
"""
