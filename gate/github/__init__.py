"""GitHub REST access: a generic client (`client`) and the domain calls built on it (`comments`)."""
