"""A minimal PNG writer (stdlib zlib/struct) and a raster canvas with a 3x5 pixel font."""

import struct
import zlib

# 3x5 glyphs, rows top to bottom, 3 bits each (MSB = left column)
FONT = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 3, 1, 7),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 2, 2, 2),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7),
    "A": (2, 5, 7, 5, 5), "B": (6, 5, 6, 5, 6), "C": (3, 4, 4, 4, 3), "D": (6, 5, 5, 5, 6),
    "E": (7, 4, 6, 4, 7), "F": (7, 4, 6, 4, 4), "G": (3, 4, 5, 5, 3), "H": (5, 5, 7, 5, 5),
    "I": (7, 2, 2, 2, 7), "J": (1, 1, 1, 5, 2), "K": (5, 5, 6, 5, 5), "L": (4, 4, 4, 4, 7),
    "M": (5, 7, 7, 5, 5), "N": (6, 5, 5, 5, 5), "O": (2, 5, 5, 5, 2), "P": (6, 5, 6, 4, 4),
    "Q": (2, 5, 5, 6, 3), "R": (6, 5, 6, 5, 5), "S": (3, 4, 2, 1, 6), "T": (7, 2, 2, 2, 2),
    "U": (5, 5, 5, 5, 7), "V": (5, 5, 5, 5, 2), "W": (5, 5, 7, 7, 5), "X": (5, 5, 2, 5, 5),
    "Y": (5, 5, 2, 2, 2), "Z": (7, 1, 2, 4, 7),
    " ": (0, 0, 0, 0, 0), ".": (0, 0, 0, 0, 2), ",": (0, 0, 0, 2, 4), ":": (0, 2, 0, 2, 0),
    "-": (0, 0, 7, 0, 0), "_": (0, 0, 0, 0, 7), ">": (4, 2, 1, 2, 4), "<": (1, 2, 4, 2, 1),
    "/": (1, 1, 2, 4, 4), "%": (5, 1, 2, 4, 5), "=": (0, 7, 0, 7, 0), "(": (1, 2, 2, 2, 1),
    ")": (4, 2, 2, 2, 4), "?": (7, 1, 2, 0, 2), "+": (0, 2, 7, 2, 0), "#": (5, 7, 5, 7, 5),
}


def png_bytes(width, height, rows):
    """PNG (8-bit RGB) of ``rows``: height sequences of width (r, g, b) tuples or one bytes per row."""
    raw = bytearray()
    for row in rows:
        raw.append(0)  # filter type None
        raw.extend(row if isinstance(row, (bytes, bytearray)) else bytes(c for px in row for c in px))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + chunk(b"IEND", b""))


class Canvas(object):
    def __init__(self, width, height, background=(255, 255, 255)):
        self.width = width
        self.height = height
        self.px = [bytearray(bytes(background) * width) for _i in range(height)]

    def set(self, x, y, color):
        if 0 <= x < self.width and 0 <= y < self.height:
            self.px[y][3 * x:3 * x + 3] = bytes(color)

    def rect(self, x0, y0, x1, y1, color):
        """Filled rectangle, corners inclusive."""
        for y in range(max(0, min(y0, y1)), min(self.height, max(y0, y1) + 1)):
            lo, hi = max(0, min(x0, x1)), min(self.width - 1, max(x0, x1))
            if lo <= hi:
                self.px[y][3 * lo:3 * hi + 3] = bytes(color) * (hi - lo + 1)

    def text(self, x, y, text, color=(0, 0, 0), scale=2):
        """Draw text with the 3x5 font (unknown characters as '?'); returns the end x."""
        for ch in str(text).upper():
            glyph = FONT.get(ch, FONT["?"])
            for row, bits in enumerate(glyph):
                for col in range(3):
                    if bits & (4 >> col):
                        self.rect(x + col * scale, y + row * scale, x + col * scale + scale - 1,
                                  y + row * scale + scale - 1, color)
            x += 4 * scale
        return x

    def png(self):
        return png_bytes(self.width, self.height, self.px)


def read_png(data):
    """(width, height, rows of bytes) of an 8-bit RGB PNG written by png_bytes (for tests)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height = 8, b"", None, None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise ValueError("bad CRC in %r chunk" % kind)
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 3 * width + 1
    return width, height, [raw[i * stride + 1:(i + 1) * stride] for i in range(height)]
