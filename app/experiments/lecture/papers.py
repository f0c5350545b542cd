"""The papers the deck cites: one table, read by the footer's source line of each slide and by the references slide.

A slide cites a paper by naming it the way the table's short form does ("Xiong et al. 2020") in its text or notes;
`cited_by` finds them, so the source line cannot forget a paper the notes lean on. tests/test_lecture.py fails when a
slide names an author-year the table does not hold.
"""

from __future__ import annotations

import re
from typing import Any

# short form -> full citation (authors, year, title, venue)
PAPERS: dict[str, str] = {
    "Ba et al. 2016": "J. L. Ba, J. R. Kiros, G. E. Hinton (2016). Layer Normalization. arXiv:1607.06450.",
    "Bachlechner et al. 2021": "T. Bachlechner, B. P. Majumder, H. H. Mao, G. W. Cottrell, J. McAuley (2021). ReZero "
    "is All You Need: Fast Convergence at Large Depth. UAI 2021.",
    "Brody et al. 2023": "S. Brody, U. Alon, E. Yahav (2023). On the Expressivity Role of LayerNorm in Transformers' "
    "Attention. Findings of ACL 2023.",
    "Chowdhery et al. 2022": "A. Chowdhery et al. (2022). PaLM: Scaling Language Modeling with Pathways. "
    "arXiv:2204.02311.",
    "Devlin et al. 2019": "J. Devlin, M.-W. Chang, K. Lee, K. Toutanova (2019). BERT: Pre-training of Deep "
    "Bidirectional Transformers for Language Understanding. NAACL 2019.",
    "Ding et al. 2021": "M. Ding et al. (2021). CogView: Mastering Text-to-Image Generation via Transformers. "
    "NeurIPS 2021.",
    "Dong et al. 2021": "Y. Dong, J.-B. Cordonnier, A. Loukas (2021). Attention is not all you need: pure attention "
    "loses rank doubly exponentially with depth. ICML 2021.",
    "Goyal et al. 2017": "P. Goyal et al. (2017). Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour. "
    "arXiv:1706.02677.",
    "He et al. 2016": "K. He, X. Zhang, S. Ren, J. Sun (2016). Deep Residual Learning for Image Recognition. CVPR "
    "2016; and Identity Mappings in Deep Residual Networks. ECCV 2016.",
    "Heimersheim & Turner 2023": "S. Heimersheim, A. Turner (2023). Residual stream norms grow exponentially over the "
    "forward pass. AI Alignment Forum.",
    "Kim et al. 2025": "J. Kim et al. (2025). Peri-LN: Revisiting Normalization Layer in the Transformer "
    "Architecture. ICML 2025.",
    "Li et al. 2024": "P. Li, L. Yin, S. Liu (2024). Mix-LN: Unleashing the Power of Deeper Layers by Combining "
    "Pre-LN and Post-LN. arXiv:2412.13795.",
    "Ioffe & Szegedy 2015": "S. Ioffe, C. Szegedy (2015). Batch Normalization: Accelerating Deep Network Training by "
    "Reducing Internal Covariate Shift. ICML 2015.",
    "Liu et al. 2020": "L. Liu, X. Liu, J. Gao, W. Chen, J. Han (2020). Understanding the Difficulty of Training "
    "Transformers. EMNLP 2020.",
    "Nguyen & Salazar 2019": "T. Q. Nguyen, J. Salazar (2019). Transformers without Tears: Improving the "
    "Normalization of Self-Attention. IWSLT 2019.",
    "Pagliardini et al. 2024": "M. Pagliardini, A. Mohtashami, F. Fleuret, M. Jaggi (2024). DenseFormer: Enhancing "
    "Information Flow in Transformers via Depth Weighted Averaging. NeurIPS 2024.",
    "Radford et al. 2019": "A. Radford, J. Wu, R. Child, D. Luan, D. Amodei, I. Sutskever (2019). Language Models "
    "are Unsupervised Multitask Learners. OpenAI.",
    "Shen et al. 2020": "S. Shen, Z. Yao, A. Gholami, M. W. Mahoney, K. Keutzer (2020). PowerNorm: Rethinking "
    "Batch Normalization in Transformers. ICML 2020.",
    "Srivastava et al. 2015": "R. K. Srivastava, K. Greff, J. Schmidhuber (2015). Training Very Deep Networks. "
    "NeurIPS 2015.",
    "Sun et al. 2024": "M. Sun, X. Chen, J. Z. Kolter, Z. Liu (2024). Massive Activations in Large Language Models. "
    "COLM 2024.",
    "Wang et al. 2022": "H. Wang, S. Ma, L. Dong, S. Huang, D. Zhang, F. Wei (2022). DeepNet: Scaling Transformers "
    "to 1,000 Layers. arXiv:2203.00555.",
    "Wu & He 2018": "Y. Wu, K. He (2018). Group Normalization. ECCV 2018.",
    "Vaswani et al. 2017": "A. Vaswani et al. (2017). Attention Is All You Need. NeurIPS 2017.",
    "Veit et al. 2016": "A. Veit, M. Wilber, S. Belongie (2016). Residual Networks Behave Like Ensembles of Relatively "
    "Shallow Networks. NeurIPS 2016.",
    "Xiao et al. 2023": "G. Xiao, Y. Tian, B. Chen, S. Han, M. Lewis (2023). Efficient Streaming Language Models with "
    "Attention Sinks. ICLR 2024.",
    "Xiong et al. 2020": "R. Xiong et al. (2020). On Layer Normalization in the Transformer Architecture. ICML 2020.",
    "Zhu et al. 2025": "J. Zhu, X. Chen, K. He, Y. LeCun, Z. Liu (2025). Transformers without Normalization. "
    "CVPR 2025.",
    "Zhang & Sennrich 2019": "B. Zhang, R. Sennrich (2019). Root Mean Square Layer Normalization. NeurIPS 2019.",
}
# "Xiong et al. 2020", "Zhang & Sennrich 2019", and the Chinese "Xiong 等 2020", "Zhang 与 Sennrich 2019"
AUTHOR_YEAR = re.compile(r"\b([A-Z][a-z]+)(?: et al\.| & [A-Z][a-z]+| 等| 与 [A-Z][a-z]+) (\d{4})\b")


def named(text: str) -> list[str]:
    """Every author-year a text names, in the table's short form (English and Chinese forms alike)."""
    out = []
    for match in AUTHOR_YEAR.finditer(text):
        author, year = match.groups()
        short = next((key for key in PAPERS if key.startswith(author + " ") and key.endswith(year)), None)
        out.append(short or f"{author} {year}")
    return out


def cited_by(slide: dict[str, Any]) -> list[str]:
    """The papers a slide names in its text and notes, in the order they first appear."""
    texts = " ".join(slide[field]["en"] for field in ("text", "notes"))
    return list(dict.fromkeys(named(texts)))
