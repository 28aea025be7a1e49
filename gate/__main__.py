from gate.cli import run

run()
