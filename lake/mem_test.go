package lake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/record"
)

// memRecords makes records whose keys, values and headers add up to at
// least size bytes (file_bytes, as Record.size counts them): "json",
// benchRecords' typed objects (compressible: the file is about a fifth
// of them), or "raw", random bytes that are not JSON (incompressible:
// the file is about their size, all in value_raw).
func memRecords(kind string, size int64) []Record {
	rng := rand.New(rand.NewPCG(uint64(size), 5))
	var recs []Record
	var n int64
	for i := 0; n < size; i++ {
		r := Record{Offset: int64(i), Timestamp: t0 + int64(i), Key: []byte(fmt.Sprintf("key-%d", i%1000))}
		switch kind {
		case "json":
			r.Value = []byte(fmt.Sprintf(`{"amount":%d.5,"id":%d,"name":"customer-%d","ok":%v}`, i%977, i, i%100, i%2 == 0))
			r.Headers = []record.Header{{Key: []byte("trace"), Value: []byte("abc")}}
		default:
			v := make([]byte, 100+rng.IntN(200))
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			v[0] = 0xff // never JSON
			r.Value = v
		}
		recs = append(recs, r)
		n += r.size()
	}
	return recs
}

// heapNow is the heap after two GCs (the second empties the sync.Pools,
// where parquet-go keeps its page buffers' chunks).
func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapPeak samples the heap while f runs: the largest heap (objects,
// live or not yet swept: runtime/metrics' /memory/classes/heap/objects)
// seen, every 100 µs and once after f, minus base, heapNow before f
// (which holds f's input).
func heapPeak(f func()) (peak, base uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base = heapNow()
	var mu sync.Mutex
	max := base
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			v := read()
			mu.Lock()
			max = maxOf(max, v)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	v := read()
	close(stop)
	<-done
	return maxOf(max, v) - base, base
}

func maxOf(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// The build modes TestBuildPeakMemory measures.
var memModes = []string{
	"rebuild",    // build keeps the bytes and returns them (Rebuild)
	"entry_only", // builder.entryOnly: the bytes hashed and dropped
	"indexer",    // Indexer.buildRange itself: the range's schema merged into a catalog, then the entry only
}

// TestBuildPeakMemory measures the build's peak heap against file_bytes
// (the records' key, value and header bytes) for files of 1 and 8 MiB,
// and 32 and 128 MiB with SEGKIT_LAKE_SPEED=1, of compressible JSON and
// of incompressible raw values, in each of memModes, with the default
// GOGC and with GOGC=10, where the peak is close to the live heap's, and
// asserts memBound there. The records themselves (the indexer's open range)
// are in the heap before the build and not counted; their own heap is
// printed ("records").
//
//	SEGKIT_LAKE_SPEED=1 go test -run TestBuildPeakMemory -v .
func TestBuildPeakMemory(t *testing.T) {
	sizes := []int64{1 << 20, 8 << 20}
	if os.Getenv("SEGKIT_LAKE_SPEED") == "1" {
		sizes = append(sizes, 32<<20, 128<<20)
	} else if testing.Short() {
		sizes = sizes[:1]
	}
	for _, kind := range []string{"json", "raw"} {
		for _, size := range sizes {
			before := heapNow()
			recs := memRecords(kind, size)
			sch := schemaOf(recs, DefaultMaxFields)
			recHeap := int64(heapNow()) - int64(before)
			for _, mode := range memModes {
				for _, gogc := range []int{100, 10} {
					name := fmt.Sprintf("%s/file_bytes=%dMiB/%s/gogc=%d", kind, size>>20, mode, gogc)
					t.Run(name, func(t *testing.T) {
						defer debug.SetGCPercent(debug.SetGCPercent(gogc))
						b := builder{entryOnly: mode == "entry_only"}
						var x *Indexer
						if mode == "indexer" {
							cat := openCatalog(t, nil)
							x = NewIndexer(cat, nil, Options{Table: "mem"})
							var err error
							if x.table, err = cat.Table(context.Background(), "mem"); err != nil {
								t.Fatal(err)
							}
						}
						var df DataFile
						peak, base := heapPeak(func() {
							if x != nil {
								files, err := x.buildRange(context.Background(), Range{Start: recs[0].Offset, End: recs[len(recs)-1].Offset, Records: recs})
								if err != nil || len(files) != 1 {
									t.Fatalf("buildRange: %d files, %v", len(files), err)
								}
								df = files[0]
								return
							}
							var err error
							if _, df, err = b.build(0, sch, recs, DefaultMaxFields, nil); err != nil {
								t.Fatal(err)
							}
						})
						t.Logf("%-40s %8d records (%4.0f MiB heap); file %6.1f MiB; build peak %6.1f MiB = %5.2f x file_bytes, %5.2f x file",
							name, len(recs), mib(recHeap), mib(df.Bytes), mib(int64(peak)), float64(peak)/float64(size), float64(peak)/float64(df.Bytes))
						// The bound is on the live heap: at GOGC=10 the heap is
						// within 10% of it (of the records too, then), at the
						// default GOGC up to twice it, as any Go program's.
						if bound := memBound(mode, size, df.Bytes, int64(len(recs))) + int64(base)/10; gogc == 10 && int64(peak) > bound {
							t.Errorf("peak %.1f MiB above the bound %.1f MiB", mib(int64(peak)), mib(bound))
						}
					})
				}
			}
			runtime.KeepAlive(recs)
		}
	}
}

// memBound is the build's live peak heap allowed, from what was
// measured (at GOGC=10), with margin: a constant for parquet-go's writer
// and the column buffers (a page, 256 KiB, per column), plus the file
// once for the row group's pages (kept until the row group is written),
// once more for the output buffer when the bytes are kept (the indexer
// keeps only the entry); a quarter more for what the sampling misses or
// the heap holds besides.
func memBound(mode string, fileBytes, file, records int64) int64 {
	live := 8<<20 + fileBytes/8 + file + file/4
	switch mode {
	case "rebuild":
		live += file
	}
	return live + live/4
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
