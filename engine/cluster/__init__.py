"""Running on a Spark cluster: the project's code shipped to executors, and the proof that executors and driver see
the same folders (what a master URL says lives in storage/masters.py, which writes need too)."""
