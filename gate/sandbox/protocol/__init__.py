"""What the gate and its zygote say to each other; imported by both sides.

Standard library only, except `messages` (pydantic), which only the gate imports.
"""
