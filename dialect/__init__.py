"""The streaming SQL dialect (sqlglot): parse, classify and check statements. Filled in with streaming tables."""
