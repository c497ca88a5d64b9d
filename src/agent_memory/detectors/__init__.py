"""What stored text is screened for before it is kept: credentials and other secrets
(:mod:`.secrets`, with the credentials known by their class in :mod:`.credentials`),
and instructions to the assistant posing as facts (:mod:`.instructions`). Engines
only: they find and redact, and know nothing of requests or refusals, which the
domain makes of their findings (:mod:`agent_memory.domain.screening`)."""
