"""The contract core: loading .avsc files, canonical form, the compatibility engine, the local store.

Nothing here imports typer, rich or pyspark.
"""
