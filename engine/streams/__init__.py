"""The stream engine: sources, the exactly-once Delta sink, the runner that starts one stream, and the manager (a
supervisor over the lifecycle table) that keeps every stream of the catalog running across failures and restarts."""
