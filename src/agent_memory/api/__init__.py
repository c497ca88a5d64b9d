"""Transport: server wiring, servicers, proto<->domain conversion, interceptors.

The only layer that imports generated code.
"""
