"""Spark without statement semantics: the session factory, batch SQL over snapshot views, results as Arrow, the JVM's
watchdog, the cluster set-up (`cluster/`) and the stream engine that keeps every streaming table running (`streams/`).
Knows nothing of statement kinds or of the policy: the layers above hand it what to run."""
