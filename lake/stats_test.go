package lake

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/segkit/segkit/vfs"
)

// TestStats: every file's statistics in the catalog are exact: computed
// again here from the records the file holds (read from the partition),
// and the footer's own min/max/null counts (parquet-go's writer) agree
// where the footer has them.
func TestStats(t *testing.T) {
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
	sawTyped, sawWidened := false, false
	for _, f := range files {
		recs, err := ReadRange(src, f.StartOffset, f.EndOffset+1)
		if err != nil {
			t.Fatal(err)
		}
		var in []Record
		for _, r := range recs {
			if bucketOf(r.Timestamp, o.withDefaults().Granularity) == f.Bucket {
				in = append(in, r)
			}
		}
		sch, err := cat.SchemaVersion(ctx, 1, f.SchemaVersion)
		if err != nil {
			t.Fatal(err)
		}
		cols := map[string]ColumnStats{}
		for _, c := range f.Columns {
			cols[c.Name] = c
		}
		if int64(len(in)) != f.Rows {
			t.Fatalf("file %d: %d rows, %d records in its range and bucket", f.ID, f.Rows, len(in))
		}
		// Metadata columns.
		minO, maxO := int64(math.MaxInt64), int64(math.MinInt64)
		minT, maxT := int64(math.MaxInt64), int64(math.MinInt64)
		var rawNulls, hdrNulls, hdrValues int64
		for _, r := range in {
			minO, maxO = min(minO, r.Offset), max(maxO, r.Offset)
			minT, maxT = min(minT, r.Timestamp), max(maxT, r.Timestamp)
			if _, err := ParseObject(r.Value, DefaultMaxFields); err == nil || r.Value == nil {
				rawNulls++
			}
			if len(r.Headers) == 0 {
				hdrNulls++
				hdrValues++
			}
			for _, h := range r.Headers {
				hdrValues++
				if h.Value == nil {
					hdrNulls++
				}
			}
		}
		if len(sch.Fields) == 0 {
			rawNulls = 0
			for _, r := range in {
				if r.Value == nil {
					rawNulls++
				}
			}
		}
		check := func(name, mn, mx string, nulls, values int64) {
			t.Helper()
			c, ok := cols[name]
			if !ok {
				t.Fatalf("file %d: no stats for %s", f.ID, name)
			}
			if c.Min != mn || c.Max != mx || c.NullCount != nulls || c.ValueCount != values || c.NaNCount != 0 {
				t.Errorf("file %d %s: min %q max %q nulls %d values %d nans %d; want %q %q %d %d 0", f.ID, name, c.Min, c.Max, c.NullCount, c.ValueCount, c.NaNCount, mn, mx, nulls, values)
			}
		}
		n := int64(len(in))
		check(ColOffset, strconv.FormatInt(minO, 10), strconv.FormatInt(maxO, 10), 0, n)
		check(ColTimestamp, formatTimestamp(minT), formatTimestamp(maxT), 0, n)
		check(ColPartition, "0", "0", 0, n)
		check(ColHeaders+".value", cols[ColHeaders+".value"].Min, cols[ColHeaders+".value"].Max, hdrNulls, hdrValues)
		if c := cols[ColValueRaw]; c.NullCount != rawNulls {
			t.Errorf("file %d value_raw: %d nulls, want %d", f.ID, c.NullCount, rawNulls)
		}
		// The typed column value.amount, when the file has it.
		if fld, ok := sch.Field("amount"); ok {
			sawTyped = true
			sawWidened = sawWidened || fld.Type == TypeString
			var vals []any
			nulls := int64(0)
			for _, r := range in {
				ob, err := ParseObject(r.Value, DefaultMaxFields)
				jv, found := ob.Get("amount")
				if err != nil || !found {
					nulls++
					continue
				}
				v, _ := jv.As(fld.Type)
				vals = append(vals, v)
			}
			var a acc
			a.typ = string(fld.Type)
			for _, v := range vals {
				a.add(v)
			}
			want := a.stats(0)
			c := cols[ColValue+".amount"]
			if c.Type != string(fld.Type) || c.NullCount != nulls || c.Min != want.Min || c.Max != want.Max || c.HasMinMax != (len(vals) > 0) {
				t.Errorf("file %d value.amount: %+v, want type %s nulls %d min %q max %q", f.ID, c, fld.Type, nulls, want.Min, want.Max)
			}
		}
		// The footer's statistics agree (offset: INT64 min/max, nulls).
		b, err := Rebuild(ctx, cat, src, 1, f, o)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytesReaderAt(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		col, _ := pf.Schema().Lookup(ColOffset)
		md := pf.Metadata().RowGroups[0].Columns[col.ColumnIndex].MetaData.Statistics
		if got := int64(binary.LittleEndian.Uint64(md.MinValue)); got != minO {
			t.Errorf("file %d: footer offset min %d, want %d", f.ID, got, minO)
		}
		if got := int64(binary.LittleEndian.Uint64(md.MaxValue)); got != maxO {
			t.Errorf("file %d: footer offset max %d, want %d", f.ID, got, maxO)
		}
		if md.NullCount != 0 {
			t.Errorf("file %d: footer offset nulls %d", f.ID, md.NullCount)
		}
		kc, _ := pf.Schema().Lookup(ColValueRaw)
		if got := pf.Metadata().RowGroups[0].Columns[kc.ColumnIndex].MetaData.Statistics.NullCount; got != cols[ColValueRaw].NullCount {
			t.Errorf("file %d: footer value_raw nulls %d, catalog %d", f.ID, got, cols[ColValueRaw].NullCount)
		}
	}
	if !sawTyped || !sawWidened {
		t.Errorf("typed %v widened %v: want a file with value.amount, and one where it widened to string", sawTyped, sawWidened)
	}
}

// TestAccNaN: NaNs are counted, not taken as bounds; -Inf and +Inf are
// bounds.
func TestAccNaN(t *testing.T) {
	tests := []struct {
		name     string
		in       []any
		min, max string
		nans     int64
		nulls    int64
		has      bool
	}{
		{"nan_only", []any{math.NaN(), math.NaN()}, "", "", 2, 0, false},
		{"nan_and_values", []any{1.5, math.NaN(), -2.0, nil}, "-2", "1.5", 1, 1, true},
		{"infinities", []any{math.Inf(1), math.NaN(), math.Inf(-1)}, "-Inf", "+Inf", 1, 0, true},
		{"nulls", []any{nil, nil}, "", "", 0, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := acc{typ: "double"}
			for _, v := range tt.in {
				a.add(v)
			}
			s := a.stats(0)
			if s.Min != tt.min || s.Max != tt.max || s.NaNCount != tt.nans || s.NullCount != tt.nulls || s.HasMinMax != tt.has || s.ValueCount != int64(len(tt.in)) {
				t.Fatalf("%+v", s)
			}
		})
	}
}
