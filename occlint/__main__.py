"""``python -m occlint`` entry point."""

from occlint.cli.main import main

if __name__ == "__main__":
    main()
