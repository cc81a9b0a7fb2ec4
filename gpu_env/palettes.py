"""NTSC and PAL palettes of ale-py 0.12: palette index (0..255) -> RGB and -> grayscale.

``getScreen()`` returns TIA palette indices; ``getScreenRGB()`` / ``getScreenGrayscale()`` map them
through Stella's standard NTSC or PAL table, chosen by the autodetected display format.

How the data below was derived (palette values are data, measured once, not copied from source):
a 4K test program of our own (``conformance/palette_probe.py``) sets COLUBK to 2*y on scanline y,
so one screen shows all 128 even indices; it was loaded into ale-py 0.12.1 (as ``earthworld.bin``)
with 259-line frames (NTSC), 312-line frames (PAL, even lines: even indices) and 313-line frames
(PAL colour loss: every index odd). For each index seen, ``getScreenRGB`` and ``getScreenGrayscale``
were read off the screen. NTSC odd indices (only produced by ALE's grey-out of interrupted frames)
are not observable that way; they follow the rule measured on PAL: RGB = the grey level of the
preceding even index on all three channels, grayscale = the blue channel of the next even index
(0 for index 255). ``conformance.palette_probe.measure_palettes`` re-measures all of it; the tests
compare it with this table.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_NTSC_RGB = (
    "0000000000004a4a4a4a4a4a6f6f6f6f6f6f8e8e8e8e8e8eaaaaaaaaaaaac0c0c0c0c0c0d6d6d6d6d6d6ecececececec"
    "48480040404069690f5f5f5f86861d7a7a7aa2a22a949494bbbb35acacacd2d240c1c1c1e8e84ad6d6d6fcfc54e9e9e9"
    "7c2c003f3f3f904811575757a262216e6e6eb47a30838383c3903d969696d2a44aa7a7a7dfb755b8b8b8ecc860c7c7c7"
    "901c003b3b3ba33915555555b553286b6b6bc66c3a818181d5824a949494e39759a7a7a7f0aa67b7b7b7fcbc74c7c7c7"
    "9400002c2c2ca71a1a444444b832325a5a5ac848486e6e6ed65c5c808080e46f6f929292f08080a1a1a1fc9090b0b0b0"
    "84006433333397197a4a4a4aa8308f5f5f5fb846a2737373c659b3848484d46cc3959595e07cd2a4a4a4ec8ce0b2b2b2"
    "50008427272768199a3f3f3f7d30ad5555559246c06b6b6ba459d07d7d7db56ce08f8f8fc57cee9f9f9fd48cfcaeaeae"
    "140090161616331aa33131314e32b54949496848c66060607f5cd5747474956fe3888888a980f0999999bc90fca9a9a9"
    "000094111111181aa72929292d32b84040404248c8555555545cd6686868656fe47979797580f08989898490fc999999"
    "001c88202020183b9d3c3c3c2d57b05555554272c26d6d6d548ad282828265a0e196969675b5efa8a8a884c8fcbababa"
    "0030642828281850804545452d6d985f5f5f4288b078787854a0c58d8d8d65b7d9a2a2a275ccebb6b6b684e0fcc8c8c8"
    "0040302b2b2b18624e4a4a4a2d8169656565429e827f7f7f54b89997979765d1aeadadad75e7c2c1c1c184fcd4d4d4d4"
    "0044002828281a661a47474732843262626248a0487c7c7c5cba5c9393936fd26fa9a9a980e880bdbdbd90fc90cfcfcf"
    "143c00292929355f184a4a4a527e2d6868686e9c4284848487b7549d9d9d9ed065b5b5b5b4e775cbcbcbc8fc84dfdfdf"
    "3038002f2f2f5059164f4f4f6d762b6b6b6b88923e858585a0ab4f9d9d9db7c25fb3b3b3ccd86ec8c8c8e0ec7cdcdcdc"
    "482c002f2f2f694d144f4f4f866a266b6b6ba28638858585bb9f479d9d9dd2b656b3b3b3e8cc63c8c8c8fce070dcdcdc"
)
_NTSC_GRAY = (
    "004a4a6f6f8e8eaaaac0c0d6d6ecec00400f5f1d7a2a9435ac40c14ad654e9003f1157216e30833d964aa755b860c700"
    "3b1555286b3a814a9459a767b774c7002c1a44325a486e5c806f9280a190b064337a4a8f5fa273b384c395d2a4e0b284"
    "279a3fad55c06bd07de08fee9ffcae9016a331b549c660d574e388f099fca99411a729b840c855d668e479f089fc9988"
    "209d3cb055c26dd282e196efa8fcba64288045985fb078c58dd9a2ebb6fcc8302b4e4a6965827f9997aeadc2c1d4d400"
    "281a473262487c5c936fa980bd90cf0029184a2d684284549d65b575cb84df002f164f2b6b3e854f9d5fb36ec87cdc00"
    "2f144f266b3885479d56b363c870dc00"
)
_PAL_RGB = (
    "0000000000002b2b2b2b2b2b525252525252767676767676979797979797b6b6b6b6b6b6d2d2d2d2d2d2ecececececec"
    "0000000000002b2b2b2b2b2b525252525252767676767676979797979797b6b6b6b6b6b6d2d2d2d2d2d2ecececececec"
    "8058005a5a5a96711a727272ab8732888888be9c489d9d9dcfaf5cafafafdfc06fc0c0c0eed180d0d0d0fce090dfdfdf"
    "445c004a4a4a5e791a6666667693327f7f7f8cac48979797a0c25cacacacb3d76fc0c0c0c4ea80d3d3d3d4fc90e4e4e4"
    "70340040404089511a5b5b5ba06b32747474b684488c8c8cc99a5ca1a1a1dcaf6fb5b5b5ecc280c7c7c7fcd490d8d8d8"
    "0064143d3d3d1a803559595932985272727248b06e8989895cc5879f9f9f6fd99eb3b3b380ebb4c5c5c590fcc8d6d6d6"
    "700014242424891a353e3e3ea03252575757b6486e6d6d6dc95c87818181dc6f9e959595ec80b4a6a6a6fc90c8b7b7b7"
    "005c5c4040401a76765a5a5a328e8e72727248a4a48888885cb8b89c9c9c6fcbcbafafaf80dcdcc0c0c090ececd0d0d0"
    "70005c2c2c2c841a744444449632895a5a5aa8489e6e6e6eb75cb0818181c66fc1929292d380d1a2a2a2e090e0b1b1b1"
    "003c70303030195a894c4c4c2f75a0656565448eb67c7c7c57a5c992929268badca5a5a579ceecb8b8b888e0fcc9c9c9"
    "5800702727276e1a894040408332a05757579648b66c6c6ca75cc97f7f7fb76fdc919191c680eca1a1a1d490fcb1b1b1"
    "002070202020193f893c3c3c2f5aa05555554474b66d6d6d578bc983838368a1dc97979779b5eca9a9a988c8fcbbbbbb"
    "3400801e1e1e4a1a963636365f32ab4d4d4d7248be626262835ccf757575936fdf878787a280ee979797b090fca6a6a6"
    "0000881010101a1a9d2929293232b04040404848c25656565c5cd26969696f6fe17c7c7c8080ef8d8d8d9090fc9c9c9c"
    "0000000000002b2b2b2b2b2b525252525252767676767676979797979797b6b6b6b6b6b6d2d2d2d2d2d2ecececececec"
    "0000000000002b2b2b2b2b2b525252525252767676767676979797979797b6b6b6b6b6b6d2d2d2d2d2d2ecececececec"
)
_PAL_GRAY = (
    "002b2b525276769797b6b6d2d2ecec00002b2b525276769797b6b6d2d2ecec005a1a723288489d5caf6fc080d090df00"
    "4a1a66327f48975cac6fc080d390e400401a5b3274488c5ca16fb580c790d8143d355952726e89879f9eb3b4c5c8d614"
    "24353e52576e6d87819e95b4a6c8b75c40765a8e72a488b89ccbafdcc0ecd05c2c7444895a9e6eb081c192d1a2e0b170"
    "30894ca065b67cc992dca5ecb8fcc970278940a057b66cc97fdc91eca1fcb17020893ca055b66dc983dc97eca9fcbb80"
    "1e9636ab4dbe62cf75df87ee97fca688109d29b040c256d269e17cef8dfc9c00002b2b525276769797b6b6d2d2ecec00"
    "002b2b525276769797b6b6d2d2ecec00"
)


def _rgb(hexdata: str) -> npt.NDArray[np.uint8]:
    return np.frombuffer(bytes.fromhex(hexdata), dtype=np.uint8).reshape(256, 3).copy()


def _gray(hexdata: str) -> npt.NDArray[np.uint8]:
    return np.frombuffer(bytes.fromhex(hexdata), dtype=np.uint8).copy()


NTSC_RGB: npt.NDArray[np.uint8] = _rgb(_NTSC_RGB)
"""uint8[256, 3]: RGB of each palette index on an NTSC console."""
NTSC_GRAY: npt.NDArray[np.uint8] = _gray(_NTSC_GRAY)
"""uint8[256]: ALE's grayscale value of each palette index on an NTSC console."""
PAL_RGB: npt.NDArray[np.uint8] = _rgb(_PAL_RGB)
"""uint8[256, 3]: RGB of each palette index on a PAL console."""
PAL_GRAY: npt.NDArray[np.uint8] = _gray(_PAL_GRAY)
"""uint8[256]: ALE's grayscale value of each palette index on a PAL console."""


def rgb_table(pal: bool) -> npt.NDArray[np.uint8]:
    """Return the index -> RGB table (uint8[256, 3]) of the PAL (``pal=True``) or NTSC console."""
    return PAL_RGB if pal else NTSC_RGB


def gray_table(pal: bool) -> npt.NDArray[np.uint8]:
    """Return the index -> grayscale table (uint8[256]) of the PAL (``pal=True``) or NTSC console."""
    return PAL_GRAY if pal else NTSC_GRAY
