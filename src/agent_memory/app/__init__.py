"""The composition root and the processes it runs: the server built from its parts
(:mod:`.server`), ``agent-memory serve`` with its workers and index worker
(:mod:`.serve`, :mod:`.workers`, :mod:`.index_process`), and the supervision that
ties a child to its parent (:mod:`.parent`)."""
