"""Ledgerly assistant: an offline example app whose behaviour follows its prompt and config."""
