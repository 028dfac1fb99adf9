package vfs

import (
	"errors"
	"io"
	"io/fs"
	"runtime"
	"testing"
	"time"
)

// claimFile is a File whose Stat claims a size its reads do not hold, as
// a sparse file's or a lying FS's does.
type claimFile struct {
	File
	size int64
	data []byte
}

func (f *claimFile) Stat() (fs.FileInfo, error) { return claimInfo(f.size), nil }

func (f *claimFile) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

type claimInfo int64

func (c claimInfo) Name() string       { return "claim" }
func (c claimInfo) Size() int64        { return int64(c) }
func (c claimInfo) Mode() fs.FileMode  { return 0o644 }
func (c claimInfo) ModTime() time.Time { return time.Time{} }
func (c claimInfo) IsDir() bool        { return false }
func (c claimInfo) Sys() any           { return nil }

// TestReadAllPreallocationCapped: readAll does not allocate what Stat
// claims (1 TiB here) before reading: it allocated fi.Size()+1 bytes at once.
func TestReadAllPreallocationCapped(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := readAll(&claimFile{size: 1 << 40, data: []byte("abc")}, "claim", -1)
	runtime.ReadMemStats(&after)
	if err != nil || string(data) != "abc" {
		t.Fatalf("readAll = %q, %v", data, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*maxPrealloc {
		t.Errorf("readAll allocated %d bytes for a 3-byte read, want at most %d", got, 4*maxPrealloc)
	}
}

// TestReadAllLimitWhileReading: a file holding more than its Stat size is
// stopped at the limit while it is read.
func TestReadAllLimitWhileReading(t *testing.T) {
	_, err := readAll(&claimFile{size: 2, data: make([]byte, 100)}, "claim", 10)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("readAll past the limit: %v, want ErrTooLarge", err)
	}
}
