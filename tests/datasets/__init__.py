"""Tests for workbench.datasets: importers and the shipped demo set."""
