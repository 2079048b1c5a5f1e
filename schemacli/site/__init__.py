"""``schemacli report --html``: a static, self-contained site of the store (one page per subject)
and of migration windows. ``build`` gathers what the pages show, ``census`` reads a census file,
``render`` turns it into HTML (every user text escaped), ``write`` plans the files for one atomic
write into the output folder."""
