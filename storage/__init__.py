"""Bytes and Delta, never SQL: where the warehouse's files live (a local folder or an S3-compatible store), the one
owner of name -> folder (`locations`), and Delta tables read, written and committed through delta-rs (`delta/`).

- `settings`: the store's endpoint and credentials (ObjectStoreSettings), never shown in any output;
- `registry`: which settings serve which object prefix (the gateway registers its warehouse at start);
- `files`: a pyarrow filesystem for a location, and listing, deleting and copying a prefix;
- `locations`: a table's or checkpoint's folder from its catalog name, checked to stay inside the warehouse;
- `delta/`: opening (`tables`), reading, writing, committing and verifying Delta tables;
- `spark_errors`, `observations`, `masters`: the Spark helpers a write needs (Spark writes the Parquet files).

Spark has no S3 filesystem here (no hadoop-aws): Spark never sees an `s3://` path. Bytes on the store move in
Python, through delta-rs (the log, with conditional put) and pyarrow's S3FileSystem (Parquet, on executors).
"""
