"""Keep an int8 model's embedding tables int8 while it runs.

The packaged MiniLM stores every weight as int8 with a float scale, dequantized in the
graph (``Mul(Cast(table), scale)``). onnxruntime folds those constants at session
creation, so the word-embedding table (30,522 x 384) sits in memory as 45 MB of
float32 for a lookup of a few hundred rows per batch. ``gather_int8_rows`` rewrites

    Gather(Mul(Cast(table), scale), ids)
into
    Mul(Cast(Gather(table, ids)), Gather(scale, ids))      (a scale per row)
    Mul(Cast(Gather(table, ids)), scale)                   (one scale)

which multiplies the same numbers: the outputs are bit for bit the same, and the
table stays 11 MB of int8. The matrix weights are left to onnxruntime: their float
copies are what its fast matrix multiply reads, and dequantizing them per run made a
query embedding ten times slower (bench/embed_bench.py's notes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from .protobuf_wire import BYTES, Field, read_fields, strings, varints, write_fields

log = logging.getLogger(__name__)

# Written once beside model.onnx; the version changes with the rewrite.
REWRITTEN_NAME = "model.int8-rows.v1.onnx"

MODEL_GRAPH = 7
GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_OUTPUT = 1, 5, 12
NODE_INPUT, NODE_OUTPUT, NODE_NAME, NODE_OP_TYPE, NODE_ATTRIBUTE, NODE_DOMAIN = 1, 2, 3, 4, 5, 7
ATTRIBUTE_NAME, ATTRIBUTE_INT = 1, 3
TENSOR_DIMS, TENSOR_NAME = 1, 8
VALUE_INFO_NAME = 1


class Node(NamedTuple):
    fields: list[Field]
    inputs: list[str]
    outputs: list[str]
    op_type: str
    domain: str


def _node(fields: list[Field]) -> Node:
    domain = strings(fields, NODE_DOMAIN)
    op = strings(fields, NODE_OP_TYPE)
    return Node(fields, strings(fields, NODE_INPUT), strings(fields, NODE_OUTPUT), op[0] if op else "",
                domain[0] if domain else "")


def _new_node(op_type: str, inputs: list[str], output: str, attributes: Sequence[Field] = ()) -> Field:
    fields = [Field(NODE_INPUT, BYTES, i.encode()) for i in inputs]
    fields += [Field(NODE_OUTPUT, BYTES, output.encode()), Field(NODE_NAME, BYTES, output.encode()),
               Field(NODE_OP_TYPE, BYTES, op_type.encode())]
    return Field(GRAPH_NODE, BYTES, write_fields(fields + list(attributes)))


def _gather_axis(node: Node) -> int:
    for f in node.fields:
        if f.number == NODE_ATTRIBUTE:
            attribute = read_fields(f.value)
            if strings(attribute, ATTRIBUTE_NAME) == ["axis"]:
                values = varints(attribute, ATTRIBUTE_INT)
                return values[0] if values else 0
    return 0


class _Dequantized(NamedTuple):
    """``output = Mul(Cast(table), scale)``, with both inputs stored in the model."""

    cast: Node
    mul: Node
    table: str
    scale: str


def gather_int8_rows(model: bytes) -> tuple[bytes, int]:
    """(the model with each dequantized embedding table gathered before it is dequantized,
    how many tables). A model without the pattern comes back unchanged. ValueError on a
    malformed model."""
    top = read_fields(model)
    graphs = [f for f in top if f.number == MODEL_GRAPH and f.wire_type == BYTES]
    if len(graphs) != 1:
        raise ValueError("the model has no graph")
    graph = read_fields(graphs[0].value)
    nodes = {i: _node(read_fields(f.value)) for i, f in enumerate(graph) if f.number == GRAPH_NODE}
    dims: dict[str, list[int]] = {}
    for f in graph:
        if f.number == GRAPH_INITIALIZER:
            tensor = read_fields(f.value)
            dims[strings(tensor, TENSOR_NAME)[0]] = varints(tensor, TENSOR_DIMS)
    graph_outputs = {strings(read_fields(f.value), VALUE_INFO_NAME)[0] for f in graph if f.number == GRAPH_OUTPUT}
    producer = {out: node for node in nodes.values() for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes.values():
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1

    def dequantized(name: str) -> _Dequantized | None:
        mul = producer.get(name)
        if mul is None or mul.op_type != "Mul" or mul.domain or len(mul.inputs) != 2:
            return None
        for cast_out, scale in (mul.inputs, mul.inputs[::-1]):
            cast = producer.get(cast_out)
            if (cast is not None and cast.op_type == "Cast" and not cast.domain and len(cast.inputs) == 1
                    and cast.inputs[0] in dims and scale in dims and uses.get(cast_out) == 1):
                return _Dequantized(cast, mul, cast.inputs[0], scale)
        return None

    replaced: dict[int, list[Field]] = {}
    dropped: set[int] = set()
    for i, node in nodes.items():
        if node.op_type != "Gather" or node.domain or len(node.inputs) != 2 or _gather_axis(node) != 0:
            continue
        table_out, ids = node.inputs
        found = dequantized(table_out)
        if found is None or uses.get(table_out) != 1 or table_out in graph_outputs:
            continue
        table_dims, scale_dims = dims[found.table], dims[found.scale]
        per_row = len(table_dims) == 2 and scale_dims == [table_dims[0], 1]
        if not per_row and _count(scale_dims) != 1:
            continue  # a scale per column would need the table's shape after the Gather
        out = node.outputs[0]
        cast_attributes = [f for f in found.cast.fields if f.number == NODE_ATTRIBUTE]
        new = [_new_node("Gather", [found.table, ids], f"{out}/int8_rows"),
               _new_node("Cast", [f"{out}/int8_rows"], f"{out}/rows", cast_attributes)]
        scale = found.scale
        if per_row:
            new.append(_new_node("Gather", [found.scale, ids], f"{out}/row_scales"))
            scale = f"{out}/row_scales"
        new.append(_new_node("Mul", [f"{out}/rows", scale], out))
        replaced[i] = new
        dropped |= {k for k, n in nodes.items() if n is found.cast or n is found.mul}
    if not replaced:
        return model, 0
    new_graph: list[Field] = []
    for i, f in enumerate(graph):
        if i in dropped:
            continue
        new_graph.extend(replaced.get(i, [f]))
    new_top = [Field(MODEL_GRAPH, BYTES, write_fields(new_graph)) if f is graphs[0] else f for f in top]
    return write_fields(new_top), len(replaced)


def _count(dims: list[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def int8_rows_model(model_dir: Path) -> Path:
    """The folder's model.onnx rewritten by ``gather_int8_rows``, written once beside it
    (onnxruntime then reads the file itself: handed bytes, its Python binding keeps them
    for the life of the session). model.onnx itself when it has no such table, or when
    the folder is read-only. ValueError on a malformed model."""
    model_dir = Path(model_dir)
    done = model_dir / REWRITTEN_NAME
    if done.is_file():
        return done
    source = model_dir / "model.onnx"
    rewritten, tables = gather_int8_rows(source.read_bytes())
    if not tables:
        return source
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{REWRITTEN_NAME}.", suffix=".tmp", dir=model_dir)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(rewritten)
            os.replace(tmp, done)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        log.info("running %s as it is (%s cannot be written: %s)", source, done.name, e)
        return source
    return done
