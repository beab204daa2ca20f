"""What every `howtobench` command's parser shares: the common options, their argparse
types, the values a parser shows without loading inspect-ai (`constants`), the extras a
command needs, and public names that load on first use. Each room registers its own
commands with these; `howtobench.cli` puts them together."""

__all__: list[str] = []
