"""The web console, served under `/console/` on the HTTP port: `app.py` (routes, login, who sees what),
`logins.py` (the cookie and CSRF token), `pipeline.py` (streaming tables, materialized views and lineage from the
catalog), `sources.py` (the query history and running queries behind Protocols), `pages.py` and `markup.py` (HTML,
escaped), `charts.py` (inline SVG)."""
