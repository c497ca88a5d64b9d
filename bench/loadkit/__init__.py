"""The parts of the load benchmarks (``bench/rpc_load.py``, ``bench/http_load.py``)."""
