"""The contract core: .avsc loading, canonical form, the compatibility engine, the local store.

Nothing here imports typer, rich or pyspark.
"""
