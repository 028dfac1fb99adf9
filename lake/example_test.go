package lake_test

import (
	"fmt"

	"github.com/segkit/segkit/lake"
)

// The schema of two JSON values merged: a new field is added, an int64
// widens to double, and an incompatible type becomes string.
func ExampleSchema_Merge() {
	a, _ := lake.ParseObject([]byte(`{"amount":1,"ok":true}`), lake.DefaultMaxFields)
	b, _ := lake.ParseObject([]byte(`{"amount":2.5,"ok":"yes","note":"x"}`), lake.DefaultMaxFields)
	s, _ := a.Schema().Merge(b.Schema())
	for _, f := range s.Fields {
		fmt.Println(f.Name, f.Type)
	}
	// Output:
	// amount double
	// note string
	// ok string
}
