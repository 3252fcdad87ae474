"""Tests of the clinician re-annotation core (annotate/) and its CLI."""
