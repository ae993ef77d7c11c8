"""Screens and modals of the workbench (one per file)."""
