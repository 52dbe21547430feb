"""Tiny but valid PNG and WAV files, built with the standard library only.

The conformance suite wants real image and audio content blocks; generating them in code keeps
binary files out of the repository.
"""

from __future__ import annotations

import base64
import io
import math
import struct
import wave
import zlib


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    # Each chunk: length, type, data, CRC-32 over type + data (PNG spec §5.3).
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def tiny_png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (255, 140, 0)) -> bytes:
    """A ``width`` x ``height`` single-colour 8-bit RGB PNG."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit truecolour
    row = b"\x00" + bytes(rgb) * width  # filter type 0 (None), then the pixels
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(row * height))
        + _png_chunk(b"IEND", b"")
    )


def tiny_wav(seconds: float = 0.1, frequency: float = 440.0, rate: int = 8000) -> bytes:
    """A mono 16-bit PCM WAV holding a short sine tone."""
    frames = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * frequency * i / rate)))
        for i in range(int(seconds * rate))
    )
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
