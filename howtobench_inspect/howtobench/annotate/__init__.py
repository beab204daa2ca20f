"""The rating studio: experts rate writings from our logs in a browser, the paper's way.

`sources` reads the writings out of inspect logs, `campaign` plans a campaign, `store`
keeps it and every rating in one SQLite file (`schema`), `app` is the pages and their
JSON API behind `http_guard`, served by `server`, and `export` writes the ratings file
`howtobench metaeval` reads. `protocol` holds the rules a rating must follow, checked on
the server whatever the page does.
"""

__all__: list[str] = []  # no module is imported here, so importing the package costs nothing
