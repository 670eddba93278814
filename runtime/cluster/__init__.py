"""Running on a Spark cluster: which masters are local, the project's code shipped to executors, and the proof that
executors and driver see the same folders."""
