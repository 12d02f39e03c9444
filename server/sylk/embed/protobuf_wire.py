"""Just enough of the protobuf wire format to edit an ONNX model's graph without the
``onnx`` package: a message is a list of ``Field`` records in file order, and writing
it back gives the same bytes for the fields left alone (unknown fields included).
"""

from __future__ import annotations

from typing import NamedTuple

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


class Field(NamedTuple):
    number: int
    wire_type: int
    value: int | bytes  # an int for VARINT, the raw bytes otherwise


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("a protobuf message ends inside a varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("a protobuf varint is longer than 10 bytes")


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int64 fields are written as their two's complement
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_fields(data: bytes) -> list[Field]:
    """The fields of one message, in order. ValueError on a malformed message."""
    out: list[Field] = []
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        value: int | bytes
        if wire_type == VARINT:
            value, pos = _read_varint(data, pos)
        elif wire_type == BYTES:
            size, pos = _read_varint(data, pos)
            value, pos = bytes(data[pos : pos + size]), pos + size
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            value, pos = bytes(data[pos : pos + size]), pos + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type}")
        if pos > len(data):
            raise ValueError("a protobuf field runs past the end of its message")
        out.append(Field(number, wire_type, value))
    return out


def write_fields(fields: list[Field]) -> bytes:
    out = bytearray()
    for f in fields:
        out += _varint((f.number << 3) | f.wire_type)
        if f.wire_type == VARINT:
            out += _varint(int(f.value))
        elif f.wire_type == BYTES:
            out += _varint(len(f.value))
            out += f.value
        else:
            out += f.value
    return bytes(out)


def varints(fields: list[Field], number: int) -> list[int]:
    """A repeated integer field, written packed or one value per field."""
    out: list[int] = []
    for f in fields:
        if f.number != number:
            continue
        if f.wire_type == VARINT:
            out.append(int(f.value))
        elif f.wire_type == BYTES:
            pos = 0
            while pos < len(f.value):
                value, pos = _read_varint(f.value, pos)
                out.append(value)
    return out


def strings(fields: list[Field], number: int) -> list[str]:
    return [bytes(f.value).decode("utf-8") for f in fields if f.number == number and f.wire_type == BYTES]


def string_field(number: int, text: str) -> Field:
    return Field(number, BYTES, text.encode("utf-8"))
