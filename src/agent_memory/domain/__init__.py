"""Plain types, errors and validation rules; no transport, no storage."""
