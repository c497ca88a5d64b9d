"""Typed Python client for the agent-memory service."""

__version__ = "0.1.0"
