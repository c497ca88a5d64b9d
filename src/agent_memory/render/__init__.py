"""Pure prompt rendering: the same state always renders to the same bytes."""
