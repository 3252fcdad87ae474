"""Paper-agnostic pieces: the item bootstrap (`bootstrap`), a report as data (`document`) and
its Markdown/HTML/JSON rendering (`render`) under one rounding rule (`rounding`), and the
word diff of an edit (`textdiff`)."""
