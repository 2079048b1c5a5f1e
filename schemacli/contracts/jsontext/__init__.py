"""JSON text that remembers where each value sits: parsing with line:col, JSON pointers, bounds."""
