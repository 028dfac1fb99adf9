package indexfile_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/segkit/segkit/internal/indexfile"
)

func TestRelative(t *testing.T) {
	for _, tt := range []struct {
		offset, base int64
		rel          int32
		ok           bool
	}{
		{0, 0, 0, true},
		{5, 0, 5, true},
		{math.MaxInt32, 0, math.MaxInt32, true},
		{math.MaxInt32 + 1, 0, 0, false},
		{-1, 0, 0, false},
		{math.MaxInt64, math.MaxInt64 - 3, 3, true},
		{math.MinInt64 + 2, math.MinInt64, 2, true},
		{math.MinInt64, math.MaxInt64, 0, false},
	} {
		rel, ok := indexfile.Relative(tt.offset, tt.base)
		if rel != tt.rel || ok != tt.ok {
			t.Errorf("Relative(%d, %d) = %d, %v; want %d, %v", tt.offset, tt.base, rel, ok, tt.rel, tt.ok)
		}
	}
}

func TestIndexPoints(t *testing.T) {
	for _, tt := range []struct {
		name      string
		positions []int64
		interval  int
		want      []int
	}{
		{"empty", nil, 4096, nil},
		{"first_batch_never", []int64{0}, 0, nil},
		{"every_batch_interval_0", []int64{0, 1, 2, 3}, 0, []int{1, 2, 3}},
		{"strictly_more_than", []int64{0, 4096, 4097, 8193, 8194}, 4096, []int{2, 4}},
		{"big_batches", []int64{0, 10000, 20000, 20001}, 4096, []int{1, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			err := indexfile.IndexPoints(len(tt.positions), tt.interval, func(i int) int64 { return tt.positions[i] }, func(i int) error {
				got = append(got, i)
				return nil
			})
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("IndexPoints = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	stop := errors.New("stop")
	calls := 0
	err := indexfile.IndexPoints(3, 0, func(i int) int64 { return int64(i) }, func(int) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("IndexPoints = %v after %d calls, want the first error of f after 1", err, calls)
	}
}
