"""Streaming tables: the grammar's extra nodes, the analysis of a CREATE STREAMING TABLE and its plan."""
