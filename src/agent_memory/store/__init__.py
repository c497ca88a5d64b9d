"""PostgreSQL storage: repositories on units of work, fixed SQL through psycopg.

``repositories.py`` is the contract services depend on; ``database.py`` implements
it over a psycopg pool; ``models.py`` and ``migrations/`` own the schema.
"""
