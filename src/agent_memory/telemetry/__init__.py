"""Tracing and logging set-up."""
