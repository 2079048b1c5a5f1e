"""The Avro model: the parser (Java's rules), canonical form, defaults, named types across files."""
