package lake

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/segkit/segkit/vfs"
)

// TestArrowReader: a second Parquet reader, arrow-go's, reads every
// rebuilt file whole (nested columns included) with the catalog's row
// count, and the footer statistics it reads agree with the catalog's:
// null counts of every column, min/max of the INT64 and DOUBLE columns.
func TestArrowReader(t *testing.T) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock())
	o := testOptions()
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := cat.Files(ctx, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		b, err := Rebuild(ctx, cat, src, 1, f, o)
		if err != nil {
			t.Fatal(err)
		}
		r, err := file.NewParquetReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("file %d: arrow-go: %v", f.ID, err)
		}
		if r.NumRows() != f.Rows {
			t.Fatalf("file %d: arrow-go reads %d rows, catalog %d", f.ID, r.NumRows(), f.Rows)
		}
		tbl, err := pqarrow.ReadTable(ctx, bytes.NewReader(b), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("file %d: arrow-go table: %v", f.ID, err)
		}
		if tbl.NumRows() != f.Rows {
			t.Fatalf("file %d: arrow table of %d rows, catalog %d", f.ID, tbl.NumRows(), f.Rows)
		}
		byName := map[string]ColumnStats{}
		for _, c := range f.Columns {
			byName[c.Name] = c
		}
		// The nulls arrow-go decodes from the data (not the footer), for
		// the flat columns and the typed value fields.
		for i := 0; i < int(tbl.NumCols()); i++ {
			col := tbl.Column(i)
			for _, ch := range col.Data().Chunks() {
				if st, ok := ch.(*array.Struct); ok && col.Name() == ColValue {
					for k := 0; k < st.NumField(); k++ {
						name := ColValue + "." + st.DataType().(*arrow.StructType).Field(k).Name
						if got, want := int64(st.Field(k).NullN()), byName[name].NullCount; got != want {
							t.Errorf("file %d %s: arrow-go decodes %d nulls, catalog %d", f.ID, name, got, want)
						}
						checked++
					}
					continue
				}
				if c, ok := byName[col.Name()]; ok {
					if got := int64(ch.NullN()); got != c.NullCount {
						t.Errorf("file %d %s: arrow-go decodes %d nulls, catalog %d", f.ID, col.Name(), got, c.NullCount)
					}
					checked++
				}
			}
		}
		tbl.Release()
		for rg := 0; rg < r.NumRowGroups(); rg++ {
			md := r.MetaData().RowGroup(rg)
			for i := 0; i < md.NumColumns(); i++ {
				cc, err := md.ColumnChunk(i)
				if err != nil {
					t.Fatal(err)
				}
				name := cc.PathInSchema().String()
				want, ok := byName[name]
				if !ok {
					t.Fatalf("file %d: arrow-go finds column %q, the catalog has none", f.ID, name)
				}
				if set, _ := cc.StatsSet(); !set {
					continue
				}
				st, err := cc.Statistics()
				if err != nil {
					t.Fatal(err)
				}
				if st.HasNullCount() && st.NullCount() != want.NullCount {
					t.Errorf("file %d %s: arrow-go null count %d, catalog %d", f.ID, name, st.NullCount(), want.NullCount)
				}
				if !st.HasMinMax() {
					continue
				}
				var mn, mx string
				switch s := st.(type) {
				case *metadata.Int64Statistics:
					if want.Type == "timestamp_ms" {
						mn, mx = formatTimestamp(s.Min()), formatTimestamp(s.Max())
					} else {
						mn, mx = strconv.FormatInt(s.Min(), 10), strconv.FormatInt(s.Max(), 10)
					}
				case *metadata.Int32Statistics:
					mn, mx = strconv.FormatInt(int64(s.Min()), 10), strconv.FormatInt(int64(s.Max()), 10)
				case *metadata.Float64Statistics:
					mn, mx = strconv.FormatFloat(s.Min(), 'g', -1, 64), strconv.FormatFloat(s.Max(), 'g', -1, 64)
				default:
					continue
				}
				if mn != want.Min || mx != want.Max {
					t.Errorf("file %d %s: arrow-go min/max %s/%s, catalog %s/%s", f.ID, name, mn, mx, want.Min, want.Max)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no statistics compared")
	}
}
