"""What is on disk: kinspect's store and its side files, and Triton's caches, dump folders and
traces, read without writing."""
