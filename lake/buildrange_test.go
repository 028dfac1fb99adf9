package lake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBuildRangeTableSchemaFirst: buildRange builds with the table's
// schema first and merges the range's only when a record does not fit
// (the builder's misfit). Its files and schema versions must be those of
// merging every range's schema first, then building (the way the
// indexer built before), over ranges whose values bring new fields,
// widen types (int64 to double to string), hold nulls, empty objects,
// nested JSON, non-objects and non-JSON, in several buckets.
func TestBuildRangeTableSchemaFirst(t *testing.T) {
	ctx := context.Background()
	values := []string{
		`{"a":1}`, `{"a":2,"b":"x"}`, `{}`, `{"a":null}`, `{"a":1.5}`, `{"c":{"d":[1,2]}}`, `[1,2]`, `7`, `"s"`,
		`not json`, `{"a":"text"}`, `{"b":true}`, `{"e":1e400}`, `{"a":3,"a":4}`, `{"f":-1}`, `{"g":null,"a":5}`, ``,
	}
	rng := rand.New(rand.NewPCG(7, 9))
	newCat := openCatalog(t, nil)
	oldCat := openCatalog(t, nil)
	xNew := NewIndexer(newCat, nil, Options{Table: "t"})
	xOld := NewIndexer(oldCat, nil, Options{Table: "t"})
	for _, x := range []*Indexer{xNew, xOld} {
		var err error
		if x.table, err = x.cat.Table(ctx, "t"); err != nil {
			t.Fatal(err)
		}
	}
	off := int64(0)
	for r := range 60 {
		n := 1 + rng.IntN(40)
		var recs []Record
		for range n {
			// Mostly the first few values, so that most ranges fit the
			// schema so far; now and then one of the rest.
			v := values[rng.IntN(4)]
			if rng.IntN(5) == 0 {
				v = values[rng.IntN(len(values))]
			}
			rec := Record{Offset: off, Timestamp: t0 + int64(r)*600_000 + int64(rng.IntN(3_600_000)), Key: []byte("k")}
			if v != "" {
				rec.Value = []byte(v)
			}
			recs = append(recs, rec)
			off++
		}
		rg := Range{Start: recs[0].Offset, End: recs[len(recs)-1].Offset, Records: recs, Trigger: TriggerBytes}
		got, err := xNew.buildRange(ctx, rg)
		if err != nil {
			t.Fatal(err)
		}
		want := oldBuildRange(t, xOld, rg)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("range %d (%d records): buildRange differs from merging the schema first (-want +got):\n%s", r, n, diff)
		}
	}
	sNew, vNew, _ := newCat.MergeSchema(ctx, xNew.table, Schema{})
	sOld, vOld, _ := oldCat.MergeSchema(ctx, xOld.table, Schema{})
	if vNew != vOld || !cmp.Equal(sNew, sOld) {
		t.Errorf("table schema %d %v, want %d %v", vNew, sNew, vOld, sOld)
	}
	t.Logf("60 ranges, %d offsets; the table schema ends at version %d with %d fields", off, vNew, len(sNew.Fields))
}

// oldBuildRange is buildRange as it was: the range's schema merged into
// the table's first, then each bucket's file built with the result.
func oldBuildRange(t *testing.T, x *Indexer, r Range) []DataFile {
	t.Helper()
	ctx := context.Background()
	if x.names == nil {
		x.names = map[string]string{}
	}
	sch, ver, err := x.cat.MergeSchema(ctx, x.table, rangeSchema(r.Records, x.o.MaxFields, x.names))
	if err != nil {
		t.Fatal(err)
	}
	buckets := map[int64][]Record{}
	for _, rec := range r.Records {
		b := bucketOf(rec.Timestamp, x.o.Granularity)
		buckets[b] = append(buckets[b], rec)
	}
	x.b.entryOnly = true
	var files []DataFile
	for _, b := range slices.Sorted(mapKeys(buckets)) {
		_, df, err := x.b.build(x.o.Partition, sch, buckets[b], x.o.MaxFields, nil)
		if err != nil {
			t.Fatal(fmt.Errorf("old build: %w", err))
		}
		df.StartOffset, df.EndOffset, df.Bucket, df.Trigger, df.SchemaVersion = r.Start, r.End, b, r.Trigger, ver
		files = append(files, df)
	}
	return files
}
