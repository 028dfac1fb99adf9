package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/segkit/segkit/tier/s3"
)

// readAll returns a function reading a fetch's whole stream:
// readAll(t)(b.Get(ctx, key)).
func readAll(t *testing.T) func(io.ReadCloser, error) []byte {
	return func(rc io.ReadCloser, err error) []byte { t.Helper(); return drain(t, rc, err) }
}

func drain(t *testing.T, rc io.ReadCloser, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPutGetRange(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	data := []byte("0123456789abcdefghij")
	if err := b.PutBytes(ctx, "p/obj", data); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t)(b.Get(ctx, "p/obj")); !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, want %q", got, data)
	}
	if n, err := b.Size(ctx, "p/obj"); err != nil || n != int64(len(data)) {
		t.Fatalf("Size = %d, %v; want %d", n, err, len(data))
	}
	n := int64(len(data))
	for _, tt := range []struct {
		name       string
		start, end int64
		want       string
	}{
		{"head", 0, 5, "01234"},
		{"middle", 5, 12, "56789ab"},
		{"one_byte", 19, 20, "j"},
		{"to_end", 15, -1, "fghij"},
		{"all", 0, -1, string(data)},
		{"end_past_size", 18, 100, "ij"},
		{"empty_inside", 7, 7, ""},
		{"empty_at_end", n, n, ""},
		{"at_end_to_end", n, -1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := readAll(t)(b.GetRange(ctx, "p/obj", tt.start, tt.end)); string(got) != tt.want {
				t.Fatalf("GetRange(%d, %d) = %q, want %q", tt.start, tt.end, got, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name       string
		start, end int64
	}{
		{"start_past_end", n + 1, -1},
		{"start_past_end_bounded", n + 1, n + 5},
		{"empty_past_end", n + 1, n + 1},
		{"reversed", 5, 4},
		{"negative", -1, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := b.GetRange(ctx, "p/obj", tt.start, tt.end)
			if err == nil {
				rc.Close()
			}
			if !errors.Is(err, s3.ErrRange) {
				t.Fatalf("GetRange(%d, %d) error = %v, want ErrRange", tt.start, tt.end, err)
			}
		})
	}
	// A PUT replaces.
	if err := b.PutBytes(ctx, "p/obj", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t)(b.Get(ctx, "p/obj")); string(got) != "new" {
		t.Fatalf("after replace Get = %q", got)
	}
	// An empty object.
	if err := b.PutBytes(ctx, "p/empty", nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t)(b.GetRange(ctx, "p/empty", 0, -1)); len(got) != 0 {
		t.Fatalf("empty object read %q", got)
	}
}

func TestNotFound(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	check := func(op string, err error) {
		t.Helper()
		var nf *s3.NotFoundError
		if !errors.As(err, &nf) || nf.Key != "missing" || nf.Bucket != b.Name() {
			t.Fatalf("%s: error %v (%T), want *NotFoundError for key missing", op, err, err)
		}
		if !errors.Is(err, s3.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: %v does not match ErrNotFound and fs.ErrNotExist", op, err)
		}
	}
	_, err := b.Get(ctx, "missing")
	check("Get", err)
	_, err = b.GetRange(ctx, "missing", 3, 10)
	check("GetRange", err)
	_, err = b.GetRange(ctx, "missing", 3, 3)
	check("GetRange empty", err)
	_, err = b.GetRange(ctx, "missing", 0, -1)
	check("GetRange to end", err)
	_, err = b.Size(ctx, "missing")
	check("Size", err)
	_, err = b.ReadAll(ctx, "missing", 10)
	check("ReadAll", err)

	// A missing bucket is not a missing key.
	other, err := s3.NewBucket(s3.Config{Endpoint: requireServer(t), Bucket: "no-such-bucket-segkit", AccessKey: testAccessKey, SecretKey: testSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, "k"); err == nil || errors.Is(err, s3.ErrNotFound) {
		t.Fatalf("Get in a missing bucket: %v, want an error that is not ErrNotFound", err)
	}
}

func TestDeleteIdempotent(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	if err := b.PutBytes(ctx, "d/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := b.Delete(ctx, "d/x"); err != nil {
			t.Fatalf("delete %d: %v", i, err)
		}
		if _, err := b.Size(ctx, "d/x"); !errors.Is(err, s3.ErrNotFound) {
			t.Fatalf("after delete %d: Size error %v, want ErrNotFound", i, err)
		}
	}
	if err := b.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("deleting a key never written: %v", err)
	}
}

func TestList(t *testing.T) {
	b := newBucket(t)
	s3.SetListPageSize(b, 7) // 25 keys: four pages
	ctx := context.Background()
	var want []string
	for i := range 25 {
		k := fmt.Sprintf("a/part/%05d.log", i)
		want = append(want, k)
		if err := b.PutBytes(ctx, k, bytes.Repeat([]byte{'x'}, i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a/partition/0.log", "a/par", "b/part/0.log"} {
		if err := b.PutBytes(ctx, k, []byte("other")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.List(ctx, "a/part/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i, o := range got {
		keys = append(keys, o.Key)
		if o.Key == want[min(i, len(want)-1)] && o.Size != int64(i) {
			t.Errorf("%s: size %d, want %d", o.Key, o.Size, i)
		}
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("List(a/part/) = %q, want %q", keys, want)
	}
	if got, err := b.List(ctx, "nothing/"); err != nil || len(got) != 0 {
		t.Fatalf("List(nothing/) = %v, %v", got, err)
	}
}

// TestLargeObject puts a 16 MiB segment and reads it whole and in
// ranges: across the filer's 4 MiB chunks, at both ends, and bounded.
func TestLargeObject(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	const size = 16 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, size)
	for i := 0; i < size; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			data[i+j] = byte(v >> (8 * j))
		}
	}
	start := time.Now()
	if err := b.PutBytes(ctx, "seg/00000000000000000000.log", data); err != nil {
		t.Fatal(err)
	}
	put := time.Since(start)
	start = time.Now()
	got := readAll(t)(b.Get(ctx, "seg/00000000000000000000.log"))
	get := time.Since(start)
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("16 MiB object read back differs (%d bytes)", len(got))
	}
	t.Logf("16 MiB: put %v, get %v", put.Round(time.Millisecond), get.Round(time.Millisecond))
	ranges := [][2]int64{
		{0, 1}, {size - 1, size}, {size - 100, -1}, {4<<20 - 10, 4<<20 + 10}, {1 << 20, 9 << 20}, {0, size}, {12345, 12345 + 1<<20},
	}
	for range 20 {
		a := rng.Int64N(size)
		ranges = append(ranges, [2]int64{a, a + rng.Int64N(size-a+1)})
	}
	for _, r := range ranges {
		end := r[1]
		if end < 0 {
			end = size
		}
		got := readAll(t)(b.GetRange(ctx, "seg/00000000000000000000.log", r[0], r[1]))
		if !bytes.Equal(got, data[r[0]:end]) {
			t.Fatalf("GetRange(%d, %d): %d bytes, want %d (content differs: %v)", r[0], r[1], len(got), end-r[0], len(got) == int(end-r[0]))
		}
	}
	// A bounded range yields exactly its bytes even to a reader that asks
	// for more.
	rc, err := b.GetRange(ctx, "seg/00000000000000000000.log", 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	n, _ := io.ReadFull(rc, buf)
	rc.Close()
	if n != 100 || !bytes.Equal(buf[:n], data[100:200]) {
		t.Fatalf("bounded read gave %d bytes, want 100", n)
	}
}

// TestConcurrent shares one Bucket between goroutines that put, read
// ranges of and delete their own objects.
func TestConcurrent(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			errs <- func() error {
				key := fmt.Sprintf("c/%d", g)
				data := bytes.Repeat([]byte{byte('a' + g)}, 100_000+g)
				for range 5 {
					if err := b.PutBytes(ctx, key, data); err != nil {
						return err
					}
					rc, err := b.GetRange(ctx, key, int64(g), int64(g)+1000)
					if err != nil {
						return err
					}
					got, err := io.ReadAll(rc)
					rc.Close()
					if err != nil {
						return err
					}
					if !bytes.Equal(got, data[g:g+1000]) {
						return fmt.Errorf("%s: range read %d bytes differ", key, len(got))
					}
				}
				return b.Delete(ctx, key)
			}()
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if objs, err := b.List(ctx, "c/"); err != nil || len(objs) != 0 {
		t.Fatalf("after the deletes List = %v, %v", objs, err)
	}
}
