"""`python -m gate` and the `gate` script: isolated first (`gate.interpreter`), then the CLI."""

from gate.interpreter import isolate


def main() -> None:
    isolate()
    from gate.cli import run

    run()


if __name__ == "__main__":
    main()
