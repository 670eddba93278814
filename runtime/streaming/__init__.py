"""The stream runtime: sources, the exactly-once Delta sink, the runner that starts one stream, and the manager that
keeps every stream of the catalog running across failures and restarts."""
