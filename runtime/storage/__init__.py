"""Where the warehouse's bytes live: a local folder or an S3-compatible object store, behind one small API.

- `settings`: the store's endpoint and credentials (ObjectStoreSettings), never shown in any output;
- `registry`: which settings serve which object prefix (the gateway registers its warehouse at start);
- `delta`: the one way to open a Delta table (delta-rs, with the store's options for an object URI);
- `files`: a pyarrow filesystem for a location, and listing, deleting and copying a prefix.

Spark has no S3 filesystem here (no hadoop-aws): Spark never sees an `s3://` path. Bytes on the store move in
Python, through delta-rs (the log, with conditional put) and pyarrow's S3FileSystem (Parquet, on executors).
"""
