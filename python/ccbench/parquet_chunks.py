"""Tables written to Parquet chunk by chunk, from plain columns: a streamed run
(``simulate(..., stream_to=DIR)``, ``ccbench run``) writes its ``cwnd`` and
``queue`` rows here while the engine runs.

Only numpy and pyarrow are imported: pandas (about 50 MB more than pyarrow alone)
would otherwise sit in memory beside the engine for the whole run. A chunk is
written as ``run._write_table`` writes a whole table (categorical columns as Arrow
dictionaries, their categories in the file's metadata), so ``run._read_table``
reads both alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# The ``cwnd`` table's ``ca_state`` categories, in Linux's ``tcp_ca_state`` order
# (the codes the engine writes); here so that a streamed chunk needs no pandas.
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")

# The file-metadata key holding the categories of categorical columns: an empty
# table (no drops) would otherwise come back without its flow or link names.
CATEGORIES_KEY = b"ccbench.categories"


def arrow_chunk(columns: dict, categories: dict[str, list[str]]):
    """An Arrow table of ``columns`` (name -> numpy array, in table order); a column
    named in ``categories`` holds codes into that list and becomes a dictionary."""
    import pyarrow as pa

    arrays = {}
    for name, values in columns.items():
        if name in categories:
            codes = pa.array(np.asarray(values, dtype=np.int32))
            arrays[name] = pa.DictionaryArray.from_arrays(codes, pa.array(categories[name], type=pa.string()))
        else:
            arrays[name] = pa.array(np.asarray(values))
    table = pa.table(arrays)
    return table.replace_schema_metadata({CATEGORIES_KEY: json.dumps(categories).encode()})


class ChunkedTable:
    """A Parquet file written one row group per chunk."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.rows = 0
        self._writer = None

    def write(self, columns: dict, categories: dict[str, list[str]]) -> None:
        import pyarrow.parquet as pq

        table = arrow_chunk(columns, categories)
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.path, table.schema)
        self._writer.write_table(table)
        self.rows += table.num_rows

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
