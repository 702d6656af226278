"""Small services that talk only through Kafka, built on kheaders' public API.

Run each from the repository root: ``python -m examples.orders``, ``python -m examples.shipping``,
``python -m examples.audit`` (``--help`` for options). ``docker compose up`` runs all three
against Apache Kafka with spans exported to Jaeger; ``kheaders demo`` runs the same services
in one process against the embedded broker.
"""
