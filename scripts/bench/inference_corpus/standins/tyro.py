"""A stand-in for tyro (not packaged by Debian), enough for CleanRL's
`args = tyro.cli(Args)`: fills the Args dataclass from `--flag value`,
`--flag` / `--no-flag` for booleans, and `--flag=value`."""
import dataclasses
import sys
import typing

__all__ = ["cli"]


def _convert(kind, text, name):
    if kind is bool or kind == "bool":
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
        raise SystemExit(f"tyro stand-in: --{name} takes true or false, not {text!r}")
    origin = typing.get_origin(kind)
    if origin is typing.Union:  # Optional[X]
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    for simple in (int, float, str):
        if kind is simple or kind == simple.__name__:
            return simple(text)
    return text


def cli(cls, args=None):
    argv = list(sys.argv[1:] if args is None else args)
    hints = typing.get_type_hints(cls)
    fields = {f.name.replace("_", "-"): f.name for f in dataclasses.fields(cls)}
    values = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--"):
            raise SystemExit(f"tyro stand-in: unexpected argument {token!r}")
        flag, _, inline = token[2:].partition("=")
        negated = flag.startswith("no-") and flag[3:] in fields and hints[fields[flag[3:]]] is bool
        key = flag[3:] if negated else flag
        if key not in fields:
            raise SystemExit(f"tyro stand-in: unknown option --{flag} (fields: {', '.join(sorted(fields))})")
        name = fields[key]
        if hints[name] is bool and not inline and (negated or i + 1 == len(argv) or argv[i + 1].startswith("--")):
            values[name] = not negated
            i += 1
            continue
        if not inline:
            i += 1
            if i == len(argv):
                raise SystemExit(f"tyro stand-in: --{flag} needs a value")
            inline = argv[i]
        values[name] = _convert(hints[name], inline, flag)
        i += 1
    return cls(**values)
