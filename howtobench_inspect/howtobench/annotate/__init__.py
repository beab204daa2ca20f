"""The rating studio: experts rate writings from our logs in a browser, the paper's way.

`sources.py` reads the writings out of inspect logs; `campaign.py` plans a campaign
(which instructions, which raters, in what order) from the `campaign_options.py` it is
given; `store.py` keeps it, and every rating, in one SQLite file laid out by
`schema.py`; `app.py` is the rater and admin pages (`static/`, with the guidelines of
`guidelines/`) and their JSON API, in the words of `wording.py` (one table per
language), behind `http_guard.py`, which `server.py` serves; `summary.py` is what the
admin page shows; `export.py` writes the ratings file that `howtobench metaeval` reads.
`protocol.py` holds the rules a rating must follow (paper section 5.2, appendices G and
J), checked on the server whatever the page does. And `commands.py` registers the
`howtobench annotate` command with its actions (new, links, serve, export) and prints
what they did; it imports the store, the planner and the server only when an action runs.
"""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "app",
    "campaign",
    "campaign_options",
    "commands",
    "export",
    "http_guard",
    "protocol",
    "schema",
    "server",
    "sources",
    "store",
    "summary",
    "wording",
]
