// Package fuzzseed writes seed corpus files in the `go test fuzz v1`
// format, so that generator tests can commit seeds built from real broker
// files under testdata/fuzz/<Target>/.
package fuzzseed
