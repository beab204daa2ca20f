"""What every `howtobench` command's parser shares, all of it light: `howtobench --help`
imports it. Each room registers its own commands with these; `howtobench.cli` joins them."""

__all__: list[str] = []
