package lake

import (
	"context"
	"errors"
	"fmt"
)

// ErrChecksum is matched by a *ChecksumError.
var ErrChecksum = errors.New("lake: rebuilt file does not match its checksum")

// ChecksumError is a rebuild whose bytes differ from the catalog's
// checksum: the partition no longer holds the same committed records in
// the file's range (compaction, or a different partition).
type ChecksumError struct {
	FileID    int64
	Want, Got string
}

// Error describes the error.
func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%v: file %d: want %s, got %s", ErrChecksum, e.FileID, e.Want, e.Got)
}

// Unwrap returns ErrChecksum.
func (e *ChecksumError) Unwrap() error { return ErrChecksum }

// Rebuild builds the data file f again from src: the committed records of
// its offset range that fall in its time bucket, written with the table
// schema of its version. The bytes are checked against f.Checksum (a
// *ChecksumError if they differ). maxFields and granularity must be the
// indexer's (zero: the defaults).
func Rebuild(ctx context.Context, cat Catalog, src Source, table int64, f DataFile, o Options) ([]byte, error) {
	o = o.withDefaults()
	sch, err := cat.SchemaVersion(ctx, table, f.SchemaVersion)
	if err != nil {
		return nil, err
	}
	recs, err := ReadRange(src, f.StartOffset, f.EndOffset+1)
	if err != nil {
		return nil, err
	}
	in := recs[:0]
	for _, r := range recs {
		if bucketOf(r.Timestamp, o.Granularity) == f.Bucket {
			in = append(in, r)
		}
	}
	var b builder
	out, df, err := b.build(f.Partition, sch, in, o.MaxFields, nil)
	if err != nil {
		return nil, err
	}
	if df.Checksum != f.Checksum {
		return out, &ChecksumError{FileID: f.ID, Want: f.Checksum, Got: df.Checksum}
	}
	return out, nil
}

// ReadRange reads the committed records with offsets in [from, to) from
// src.
func ReadRange(src Source, from, to int64) ([]Record, error) {
	var out []Record
	for from < to {
		f, err := src.Fetch(from, to)
		if err != nil {
			return nil, err
		}
		out = append(out, f.Records...)
		if f.Next <= from {
			break // the last stable offset is below to
		}
		from = f.Next
	}
	return out, nil
}
