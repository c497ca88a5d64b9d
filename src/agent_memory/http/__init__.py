"""HTTP/JSON for the gRPC contract: routes from ``google.api.http``, the transcoder,
the OpenAPI document and the memory panel."""
