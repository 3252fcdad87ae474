"""Screens: the labelling screen and the coordinator screen."""
