"""``Dataset.to_dask``: a ``dask.dataframe`` over a dataset's fragments,
through Dask's own plug-in point, ``dask.dataframe.from_map``: one
partition per fragment, ``meta`` from the schema, and the optimizer's
column projection pushed into each partition's read (``columns=``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, Union

import pyarrow as pa

if TYPE_CHECKING:
    from ._dataset import Dataset, Fragment


def plain(table: pa.Table) -> pa.Table:
    """The table with dictionary columns (``symbol``) as plain text: each
    tape, so each partition, has its own dictionary."""
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, pa.field(f.name, f.type.value_type, f.nullable), table.column(i).cast(f.type.value_type))
    return table


def _frame(table: pa.Table, columns: Union[Sequence[str], None]) -> Any:
    if columns is not None:
        table = table.select(list(columns))
    return plain(table).to_pandas()


def read_partition(fragment: "Fragment", columns: Union[Sequence[str], None] = None) -> Any:
    """One partition: the fragment's events as a ``pandas.DataFrame``
    (``columns``: only these). Its error fails the task with it."""
    return _frame(fragment.to_table(), columns)


def to_dask(ds: "Dataset", columns: Union[Sequence[str], None] = None) -> Any:
    import dask.dataframe as dd

    schema = ds.schema
    columns = ds._columns(columns)
    fragments = ds.fragments()
    meta = _frame(schema.empty_table(), None)
    if not fragments:
        return dd.from_pandas(meta if columns is None else meta[columns], npartitions=1)
    df = dd.from_map(
        read_partition,
        fragments,
        meta=meta,
        label=f"floxlog-{ds.type}",
        enforce_metadata=False,
    )
    return df if columns is None else df[columns]
