"""PostgreSQL storage: ORM models, queries, transactions and migrations.

Query functions never commit: the caller's unit of work owns the transaction.
"""
