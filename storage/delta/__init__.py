"""Delta tables without Delta jars: Spark writes and reads the Parquet files, delta-rs owns the transaction log."""
