"""Benchmarks for acpls (bench/README.md)."""
