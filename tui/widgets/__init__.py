"""Widgets of the workbench: the claims table, the evidence inspector, the run header."""
