"""What every rua subcommand shares: one way to fail, which click's usage errors take too."""
from __future__ import annotations

import contextlib
import sys

import click


class UsageFailure(click.ClickException):
    """Bad input: one clear line on stderr, exit status 2, nothing written."""
    exit_code = 2

    def show(self, file=None):
        click.echo(f"rua: error: {self.message}", err=True)


def fail(message: str):
    raise UsageFailure(message)


class RuaGroup(click.Group):
    """The `rua` group: click's usage errors (a missing argument or option, a bad value, an
    unknown command) end like every other refusal, in one `rua: error:` line and status 2,
    instead of click's three lines of usage, hint and error."""

    def make_context(self, info_name, args, parent=None, **extra):
        with _one_line_usage_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):
        with _one_line_usage_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def _one_line_usage_errors():
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise   # `rua` or `rua org` alone: the help is the answer
    except click.UsageError as exc:
        text = " ".join(exc.format_message().split()).rstrip(".")
        where = exc.ctx.command_path if exc.ctx is not None else "rua"
        raise UsageFailure(f"{text[:1].lower()}{text[1:]} (see `{where} --help`)") from None


def echo_err(message: str):
    click.echo(message, err=True)
    sys.stderr.flush()


def moment_or_never(value) -> str:
    """A stored instant as the contract writes it, or "never"."""
    if value is None:
        return "never"
    from store.clock import rfc3339
    return rfc3339(value)
