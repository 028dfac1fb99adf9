//go:build linux && amd64 && !purego

package cpu

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMatchesProcCPUInfo holds each feature to the flags Linux lists in
// /proc/cpuinfo (which the kernel lists only where it saves the state they
// need), and the AMD family to the "cpu family" line.
func TestMatchesProcCPUInfo(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	flags := map[string]bool{}
	var vendor, family string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "flags":
			if len(flags) == 0 {
				for _, f := range strings.Fields(v) {
					flags[f] = true
				}
			}
		case "vendor_id":
			vendor = strings.TrimSpace(v)
		case "cpu family":
			family = strings.TrimSpace(v)
		}
	}
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"PCLMULQDQ", PCLMULQDQ(), flags["pclmulqdq"] && flags["sse4_1"]},
		{"VPCLMULQDQ", VPCLMULQDQ(), flags["vpclmulqdq"]},
		{"AVX2", AVX2(), flags["avx"] && flags["avx2"]},
		{"AVX512F", AVX512F(), flags["avx512f"]},
	} {
		if tc.got != tc.want {
			t.Errorf("%s() = %v, /proc/cpuinfo says %v", tc.name, tc.got, tc.want)
		}
	}
	want := "0"
	if vendor == "AuthenticAMD" {
		want = family
	}
	if got := AMDFamily(); want != strconv.FormatUint(uint64(got), 10) {
		t.Errorf("AMDFamily() = %d, /proc/cpuinfo: vendor %q, family %s", got, vendor, family)
	}
	t.Logf("vendor %s, family %s: PCLMULQDQ %v, VPCLMULQDQ %v, AVX2 %v, AVX512F %v", vendor, family, PCLMULQDQ(), VPCLMULQDQ(), AVX2(), AVX512F())
}
