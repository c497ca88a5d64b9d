"""The parts of the RPC load benchmark (``bench/rpc_load.py``)."""
