package interop

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/segkit/segkit/record"
)

// fixCRCs rewrites the CRC of every entry it can walk in b (CRC-32C of v2
// batches, CRC-32 of legacy messages), so that fuzzed mutations reach the
// decoders' semantic checks instead of stopping at the checksum.
func fixCRCs(b []byte) {
	for in := b; len(in) >= 17; {
		size := 12 + int(int32(binary.BigEndian.Uint32(in[8:])))
		if size < 17 || size > len(in) {
			return
		}
		switch in[16] {
		case 2:
			if size >= record.RecordBatchOverhead {
				binary.BigEndian.PutUint32(in[17:], crc32.Checksum(in[21:size], castagnoli))
			}
		case 0, 1:
			binary.BigEndian.PutUint32(in[12:], crc32.ChecksumIEEE(in[16:size]))
		}
		in = in[size:]
	}
}

func onlyV2(b []Batch) bool {
	for i := range b {
		if b[i].Magic != 2 {
			return false
		}
	}
	return true
}

// saramaComparable reports whether sarama can represent b's timestamps:
// it turns every negative timestamp into time.Time{} (read back as -1).
func saramaComparable(b []Batch) bool {
	for i := range b {
		if b[i].MaxTimestamp < 0 {
			return false
		}
		for _, r := range b[i].Records {
			if r.Timestamp < 0 {
				return false
			}
		}
		if len(b[i].Records) > 0 && b[i].Records[0].Timestamp < 0 {
			return false
		}
	}
	return true
}

// FuzzDifferential: whatever v2 log segkit accepts completely (a validating
// Scanner, every record iterated, no tail), franz-go and sarama must read
// to the same batches and records. CRCs are fixed up after mutation.
func FuzzDifferential(f *testing.F) {
	var w record.Builder
	// Small seeds only: the fuzzer's mutation and coverage cost grow with
	// the input, and large batches add nothing the differential tests lack.
	for seed := uint64(1); seed <= 200; seed++ {
		if b := segkitEncodeLog(f, &w, randLog(seed)); len(b) <= 4<<10 {
			f.Add(b)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(goldenDir, "*.log")); len(logs) > 0 {
		for _, p := range logs {
			if b, err := os.ReadFile(p); err == nil && len(b) <= 4<<10 {
				f.Add(b)
			}
		}
	}
	// Mutated frames may declare large decompressed sizes, which segkit
	// allocates up to its limit before failing; keep that small here.
	const limit = 4 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		fixCRCs(data)
		seg, err := segkitDecodeLogLimit(data, limit)
		if err != nil || len(seg) == 0 || !onlyV2(seg) {
			return
		}
		var franz FranzDecoder
		got, err := franz.Decode(data)
		if err != nil {
			t.Fatalf("segkit accepts, franz-go rejects: %v", err)
		}
		compareLog(t, 0, "franz-go", seg, got, true)
		got, err = SaramaDecode(data)
		if err != nil {
			t.Fatalf("segkit accepts, sarama rejects: %v", err)
		}
		if saramaComparable(seg) {
			compareLog(t, 0, "sarama", seg, got, true)
		}
	})
}
