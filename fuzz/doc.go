// Package fuzz holds segkit's cross-package fuzz targets (see
// docs/fuzzing.md); it has no API.
package fuzz
