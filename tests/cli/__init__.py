"""Tests for the `paw` command line."""
