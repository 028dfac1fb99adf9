"""DuckDB's view of lake data files, for lake/duckdb_test.go.

    python duckdb_check.py FILE.parquet...

prints one JSON object per file on stdout:

    {"file": PATH, "duckdb": VERSION, "rows": N, "columns": [
      {"name": "value.amount", "duckdb_type": "DOUBLE",
       "values": N, "nulls": N, "nans": N,
       "min": TEXT|null, "max": TEXT|null}, ...]}

Everything is computed by DuckDB from the data (read_parquet), never from
the footer's statistics. The leaves are found from DuckDB's own reading
of the file (DESCRIBE): a top-level column, a field of a STRUCT column, or
a field of the STRUCT elements of a LIST column (headers). For each leaf,
Parquet's leaf-level counts:

  values  rows, for a top-level column or a struct field; for a list's
          element field, the elements plus one per empty (or NULL) list
          (Parquet writes one null slot for an empty list);
  nulls   the NULLs among those: for a struct field, rows where the
          struct or the field is NULL; for a list's element field, the
          empty lists plus the NULL fields of elements;
  nans    isnan() over the non-NULL values of a DOUBLE leaf, else 0;
  min/max min()/max() over the non-NULL values, NaN excluded (DuckDB
          orders NaN above every number; the catalog's bounds exclude
          it), as text: integers, booleans and strings as DuckDB casts
          them to VARCHAR; DOUBLE as Python's repr of the value;
          TIMESTAMP WITH TIME ZONE as its epoch milliseconds (so the
          session time zone plays no part); BLOB as DuckDB casts it to
          VARCHAR (\\xNN for bytes outside printable ASCII).
"""

import json
import sys

import duckdb


def q(name):
    return '"' + name.replace('"', '""') + '"'


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def struct_fields(con, expr, src):
    """The fields of the STRUCT expression expr, with their types."""
    rows = con.execute(
        "SELECT column_name, column_type FROM (DESCRIBE SELECT unnest(" + expr + ") FROM " + src + ")"
    ).fetchall()
    return rows


def bound(con, typ, agg_sql, src):
    if typ == "DOUBLE":
        v = con.execute("SELECT " + agg_sql + " FROM " + src).fetchone()[0]
        return None if v is None else repr(float(v))
    if typ.startswith("TIMESTAMP"):
        v = con.execute("SELECT epoch_ms(" + agg_sql + ") FROM " + src).fetchone()[0]
        return None if v is None else str(v)
    v = con.execute("SELECT CAST(" + agg_sql + " AS VARCHAR) FROM " + src).fetchone()[0]
    return v


def leaf(con, name, typ, x, src, extra_values=0, extra_nulls=0):
    """Statistics of the leaf expression x over the relation src."""
    values, nonnull = con.execute("SELECT count(*), count(" + x + ") FROM " + src).fetchone()
    nans = 0
    keep = x + " IS NOT NULL"
    if typ in ("DOUBLE", "FLOAT"):
        nans = con.execute("SELECT count(*) FILTER (WHERE isnan(" + x + ")) FROM " + src).fetchone()[0]
        keep = "NOT isnan(" + x + ")"
    mn = bound(con, typ, "min(" + x + ") FILTER (WHERE " + keep + ")", src)
    mx = bound(con, typ, "max(" + x + ") FILTER (WHERE " + keep + ")", src)
    return {
        "name": name,
        "duckdb_type": typ,
        "values": values + extra_values,
        "nulls": values - nonnull + extra_nulls,
        "nans": nans,
        "min": mn,
        "max": mx,
    }


def check(con, path):
    src = "read_parquet(" + lit(path) + ")"
    rows = con.execute("SELECT count(*) FROM " + src).fetchone()[0]
    cols = []
    for name, typ in con.execute(
        "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + src + ")"
    ).fetchall():
        if typ.startswith("STRUCT(") and typ.endswith("[]"):
            # A list of structs: its element fields over the unnested
            # elements, plus one null slot per empty or NULL list.
            empty = con.execute(
                "SELECT count(*) FILTER (WHERE " + q(name) + " IS NULL OR len(" + q(name) + ") = 0) FROM " + src
            ).fetchone()[0]
            elems = "(SELECT unnest(" + q(name) + ") AS e FROM " + src + ")"
            for fname, ftyp in struct_fields(con, "e", elems):
                x = "struct_extract(e, " + lit(fname) + ")"
                cols.append(leaf(con, name + "." + fname, ftyp, x, elems, empty, empty))
        elif typ.startswith("STRUCT("):
            for fname, ftyp in struct_fields(con, q(name), src):
                x = "struct_extract(" + q(name) + ", " + lit(fname) + ")"
                cols.append(leaf(con, name + "." + fname, ftyp, x, src))
        elif typ.endswith("[]"):
            raise SystemExit("%s: column %s: a list of %s is not handled" % (path, name, typ))
        else:
            cols.append(leaf(con, name, typ, q(name), src))
    return {"file": path, "duckdb": duckdb.__version__, "rows": rows, "columns": cols}


def main():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for path in sys.argv[1:]:
        print(json.dumps(check(con, path)))


if __name__ == "__main__":
    main()
