package finding

import (
	"math"
	"testing"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "0 ms"}, {250, "250 ms"}, {1500, "1.5 s"}, {1234, "1.234 s"}, {9999, "9.999 s"}, {10_500, "10.5 s"}, {45_000, "45 s"}, {45_050, "45.05 s"},
		{60_000, "1 m"}, {60_001, "1 m 0.001 s"}, {185_895, "3 m 5.895 s"}, {200_000, "3 m 20 s"}, {3_600_000, "1 h"}, {7_500_000, "2 h 5 m"},
		{7 * 86_400_000, "7 d"}, {316_685_644 * 1000, "3665 d 8 h"}, {-60_000, "-1 m"}, {math.MaxInt64, "106751991167 d 7 h"},
		{math.MinInt64, "-106751991167 d 7 h"},
	} {
		if got := Duration(tc.ms); got != tc.want {
			t.Errorf("Duration(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

func TestTimestamp(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "1970-01-01T00:00:00.000Z"}, {1772442000123, "2026-03-02T09:00:00.123Z"}, {-1, "-1 (no timestamp)"}, {-5, "-5 (before 1970)"},
	} {
		if got := Timestamp(tc.ms); got != tc.want {
			t.Errorf("Timestamp(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}
