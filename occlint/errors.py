"""Exception types shared across occlint.

Every reader raises :class:`FormatError` (one exception type, like pyelftools' ELFError);
the CLI turns each into one ``occlint: error: PATH: message`` line.
"""


class OcclintError(Exception):
    """Base class of occlint's own errors."""


class FormatError(OcclintError):
    """A binary is truncated, corrupted, hostile or of an unsupported kind."""


class NoGpuCode(FormatError):
    """A well-formed input (a host executable or library) that holds no GPU code: an error
    for a file named on the command line, a silently skipped (and counted) file in a
    directory walk or an archive."""


class DeviceDbError(OcclintError):
    """The device database or a user device file is invalid."""


class UnknownDeviceError(OcclintError):
    """A device name matched nothing; ``suggestions`` holds the closest names."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown device {name!r}{hint} (see 'occlint devices')")


class ConfigError(OcclintError):
    """A configuration file or option is invalid."""
