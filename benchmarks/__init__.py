"""Speed benchmarks and evaluation harness: each script prints a table and writes JSON."""
