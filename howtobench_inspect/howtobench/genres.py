"""Canonical genres: the 12 columns of the paper's Table 4, and our mapping from raw labels.

The published data carries 21 raw Chinese genre labels (`sub_task`); the paper reports
12 genres but publishes no mapping. This mapping is ours and is kept stable so that
results stay comparable across releases; the README documents it.
"""

CANONICAL_GENRES: tuple[str, ...] = (
    "argumentative",
    "comment",
    "poem",
    "prose",
    "fiction",
    "letters",
    "others",
    "speech",
    "report",
    "contract",
    "plan",
    "regulation",
)

RAW_TO_CANONICAL: dict[str, str] = {
    "议论文": "argumentative",
    "文章": "comment",
    "诗歌": "poem",
    "散文": "prose",
    "纪实": "prose",
    "小说": "fiction",
    "信件类写作": "letters",
    "申请类写作": "letters",
    "演讲稿": "speech",
    "报告类写作": "report",
    "实习报告": "report",
    "工作报告": "report",
    "总结类写作": "report",
    "合同类写作": "contract",
    "方案": "plan",
    "教案": "plan",
    "规章制度": "regulation",
    "公文": "others",
    "通知": "others",
    "文秘知识": "others",
    "介绍说明": "others",
}

DEFAULT_GENRE = "others"


def canonical_genre(label: str) -> str:
    """Canonical genre of a raw label.

    Known raw labels map through `RAW_TO_CANONICAL`; a canonical name (any case) is
    kept; any other label (a user's own genre) is kept as given, so that their
    results are grouped by their own genres rather than folded into `others`.
    An empty label is `others`.
    """
    label = label.strip()
    if not label:
        return DEFAULT_GENRE
    if label in RAW_TO_CANONICAL:
        return RAW_TO_CANONICAL[label]
    if label.lower() in CANONICAL_GENRES:
        return label.lower()
    return label
