"""What the tests share: real projects and `gate` subprocesses (`cli`), report files
(`reports`), a noisy model in a git repository (`noisy_world`), GitHub's Markdown engine
(`github_html`) and the real servers (`servers/`). Test files import from here, never from
each other."""
