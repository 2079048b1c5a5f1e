"""CEL (https://github.com/google/cel-spec/blob/master/doc/langdef.md), our own: a parser with
source positions (``parser``), a type checker (``checker``), and an evaluator that compiles a
checked AST into Python closures (``evaluate``) over CEL's values (``values``) and standard
functions (``functions``), giving what cel-python and CEL-Java give."""
