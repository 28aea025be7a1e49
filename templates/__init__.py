"""Jinja2 templates for the PR comment and the job summary (shipped as package data)."""
