"""Tests for workbench.audit: planner, execution, judge (fake backend) and the real model."""
