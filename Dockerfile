# syntax=docker/dockerfile:1

# ---- builder: wheels for the project and every runtime dependency ----------
FROM python:3.11-slim AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src

# Dependencies first, from the pyproject.toml files alone, so this layer survives
# code changes. The client distribution is built from this repository below.
COPY pyproject.toml ./
COPY clients/python/pyproject.toml ./clients/python/
RUN python -c "import tomllib; deps = [d for f in ('pyproject.toml', 'clients/python/pyproject.toml') for d in tomllib.load(open(f, 'rb'))['project']['dependencies'] ]; print('\n'.join(deps))" \
        > /tmp/requirements.txt \
 && pip wheel -w /wheels -r /tmp/requirements.txt

COPY clients/python ./clients/python
COPY README.md ./
COPY src ./src
RUN pip wheel --no-deps -w /wheels .

# ---- runtime ----------------------------------------------------------------
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MEMORY_LISTEN=0.0.0.0:50051 \
    MEMORY_HTTP_LISTEN=0.0.0.0:8080 \
    MEMORY_DATA_DIR=/var/lib/agent-memory

RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links=/wheels agent-memory

# Without MEMORY_DATABASE_URL the service runs its embedded PostgreSQL in the
# data directory; PostgreSQL refuses to run as root, hence the user.
RUN groupadd --system --gid 10001 memory \
 && useradd --system --uid 10001 --gid memory --no-create-home \
        --home-dir /var/lib/agent-memory --shell /usr/sbin/nologin memory \
 && install -d -o memory -g memory -m 0700 /var/lib/agent-memory
VOLUME ["/var/lib/agent-memory"]
WORKDIR /var/lib/agent-memory

EXPOSE 50051 8080
USER memory
# SERVING only while the database answers too (MEMORY_LISTEN's port, asked on loopback).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["agent-memory", "health", "--timeout", "4"]
# Tip: `docker run --init` gives the server a reaper for the embedded PostgreSQL's processes.
ENTRYPOINT ["agent-memory"]
CMD ["serve"]
