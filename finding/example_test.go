package finding_test

import (
	"encoding/json"
	"fmt"

	"github.com/segkit/segkit/finding"
)

// Findings print as one line each, and are what segviz's --json emits;
// Kinds says what a kind means and what to do about it.
func Example() {
	ps := []finding.Problem{
		{File: "orders-0/00000000000000000000.log", Position: 4096, Kind: finding.KindLogCRC, Level: finding.Error, Detail: "checksum mismatch"},
		{File: "orders-0/00000000000000000000.index", Position: 80, Kind: finding.KindZeroPadding, Level: finding.Warning, Detail: "untrimmed"},
	}
	for _, p := range ps {
		fmt.Println(p)
	}
	fmt.Println(finding.Count(ps, finding.Error), "error")
	b, _ := json.Marshal(ps[0])
	fmt.Println(string(b))
	for _, k := range finding.Kinds() {
		if k.Name == finding.KindLogCRC {
			fmt.Println(k.Levels, "|", k.Group)
		}
	}
	// Output:
	// error orders-0/00000000000000000000.log:4096: log-crc: checksum mismatch
	// warning orders-0/00000000000000000000.index:80: zero-padding: untrimmed
	// 1 error
	// {"file":"orders-0/00000000000000000000.log","position":4096,"kind":"log-crc","level":"error","detail":"checksum mismatch"}
	// error | Segment files (`.log`)
}
