"""Use cases: each opens one unit of work, applies domain rules, returns domain types."""
