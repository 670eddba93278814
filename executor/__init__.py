"""Statement execution: the executor (one entry; the policy decides once per statement), the context handlers share,
and one home per object kind (`tables/`, `databases`, `streaming_tables`, `flows`, `materialized_views/`, `grants`,
`catalogs`, `schedules`), with query binding (`binding/`) and the read models (`listings/`)."""
