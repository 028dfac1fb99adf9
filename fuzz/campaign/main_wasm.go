//go:build js || wasip1

package main

import (
	"fmt"
	"os"
)

// main: the campaign runner starts `go test` processes, which WebAssembly
// hosts cannot do.
func main() {
	fmt.Fprintln(os.Stderr, "campaign: fuzzing campaigns need the go command; run natively")
	os.Exit(2)
}
