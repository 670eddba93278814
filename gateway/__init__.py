"""The HiveServer2 gateway: server, handler, service, sessions and operations."""
